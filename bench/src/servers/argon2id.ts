// argon2id with the auth service's parameters (services/auth/src/domain/passwords.ts): 19 MiB, 2 iterations,
// 1 lane. Copied because @meridian/auth exports only its app; keep them in step.
import { hash } from '@node-rs/argon2'

const argon2id = 2 // Algorithm.Argon2id; the const enum is not importable under isolatedModules

export const hashPassword = (password: string): Promise<string> =>
  hash(password, { algorithm: argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 })
