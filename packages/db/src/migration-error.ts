// The error migrate() throws: a bad migrations folder, a changed migration, or a migration the database refused.
export class MigrationError extends Error {
  /** the migration file concerned, when there is one */
  readonly file: string | undefined

  constructor(message: string, options: { file?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'MigrationError'
    this.file = options.file
  }
}
