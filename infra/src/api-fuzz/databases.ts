// The fuzzing run's own databases: one per service that has one (system/databases.ts).
export { createRunDatabase, type RunDatabase } from '../system/databases.ts'
