// Password hashing with argon2id (OWASP parameters: 19 MiB, 2 iterations, 1 lane); hashes never leave the service.
import { hash, verify } from '@node-rs/argon2'

const argon2id = 2 // Algorithm.Argon2id; the const enum is not importable under isolatedModules

export const hashPassword = (password: string): Promise<string> =>
  hash(password, { algorithm: argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 })

export const verifyPassword = (passwordHash: string, password: string): Promise<boolean> =>
  verify(passwordHash, password)
