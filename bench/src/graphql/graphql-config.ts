// bench:graphql's knobs, from the environment (all optional): the only reader of process.env on the parent side.
import { positiveIntegerKnob } from '../knobs.ts'

export interface GraphqlConfig {
  /** seconds of unmeasured load before each measured run (throughput), or before the measured posts (delivery) */
  warmupSeconds: number
  /** seconds measured: each server's throughput (in halves), and the posts sent to each pair */
  measureSeconds: number
  /** concurrent HTTP connections of the throughput load */
  connections: number
  /** createPost mutations per second sent to instance 1 (open loop) */
  ratePerSecond: number
  /** graphql-ws clients subscribed to postCreated on instance 2 */
  subscribers: number
  /** users in the projection, and posts spread over them, before the runs */
  seedUsers: number
  seedPosts: number
  /** after the last mutation's answer, how long the bench waits for deliveries still missing */
  drainMs: number
  /** postgres.js pool size of every server (DATABASE_POOL_MAX's default, as content's main.ts) */
  poolMax: number
  /** PATH and the like, handed on to the child processes */
  inheritedEnv: NodeJS.ProcessEnv
}

export function loadGraphqlConfig(env: NodeJS.ProcessEnv = process.env): GraphqlConfig {
  return {
    warmupSeconds: positiveIntegerKnob(env, 'BENCH_WARMUP_SECONDS', 3),
    measureSeconds: positiveIntegerKnob(env, 'BENCH_SECONDS', 10),
    connections: positiveIntegerKnob(env, 'BENCH_CONNECTIONS', 10),
    ratePerSecond: positiveIntegerKnob(env, 'BENCH_GRAPHQL_RATE', 100),
    subscribers: positiveIntegerKnob(env, 'BENCH_GRAPHQL_SUBSCRIBERS', 10),
    seedUsers: positiveIntegerKnob(env, 'BENCH_GRAPHQL_SEED_USERS', 50),
    seedPosts: positiveIntegerKnob(env, 'BENCH_GRAPHQL_SEED_POSTS', 2000),
    drainMs: 5000,
    poolMax: 10,
    inheritedEnv: env,
  }
}
