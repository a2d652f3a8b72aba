// The image of each engine on the Docker path: the one place its name and version are written in TypeScript.
// docker-compose.yml names the same images; test/containers.test.ts fails when the two disagree.
import type { ComponentName } from '@meridian/infra'

export const containerImages = {
  postgres: 'postgres:17',
  kafka: 'apache/kafka:3.9.2',
  consul: 'hashicorp/consul:1.16.3',
  redis: 'redis:7',
} as const satisfies Record<ComponentName, string>
