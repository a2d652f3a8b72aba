// The findings squawk reports on migrations written before the first release (0.1.0), accepted here rather than with
// a `-- squawk-ignore` comment in the file: the runner records each applied migration's checksum and refuses a file that
// changed afterwards, so a comment added now would stop every database migrated before it. Each of them ran before any
// deployment held rows in its tables, which is what most of these rules guard against (a scan or a rewrite under
// load). A migration written from now on takes a `-- squawk-ignore <rule>` comment with its reason instead; this list
// only shrinks (the lint reports an entry that no longer matches a finding).

/** Why each rule was accepted in the pre-release migrations, by rule. */
export const preReleaseReasons: Readonly<Record<string, string>> = {
  'prefer-bigint-over-int':
    'counters and quantities (attempts, versions, stock, cents) far below 2^31; widening later is a rewrite, taken knowingly',
  'prefer-identity': 'serial step ids of the process log, as the rest of its schema expects',
  'prefer-text-field': 'varchar(n) bounds that document the outbox and inbox columns; never resized so far',
  'constraint-missing-not-valid':
    'a check or unique constraint added while the table had no production rows to scan',
  'require-concurrent-index-creation':
    'an index built while the table had no production rows; the runner wrapped every migration in a transaction, where concurrently is refused',
  'adding-foreign-key-constraint': 'a foreign key added while both tables had no production rows',
  'adding-not-nullable-field':
    'NOT NULL set on a column of a table without production rows, right after its backfill',
  'ban-drop-table':
    'the saga tables replaced by views over the process tables in the same migration, before any release',
  'ban-drop-not-null': 'a column made optional for invited users, before any client depended on it',
}

/** file (from the repository's root) -> the rules accepted in it */
export const preReleaseFindings: Readonly<Record<string, readonly string[]>> = {
  'packages/events/migrations/0001_outbox.sql': ['prefer-text-field'],
  'packages/events/migrations/0002_inbox.sql': ['prefer-text-field'],
  'packages/events/migrations/0003_outbox_trace_context.sql': ['prefer-text-field'],
  'packages/process/migrations/0001_processes.sql': ['prefer-bigint-over-int', 'prefer-identity'],
  'services/auth/migrations/0001_users.sql': ['prefer-bigint-over-int'],
  'services/auth/migrations/0005_invited_users.sql': ['ban-drop-not-null', 'constraint-missing-not-valid'],
  'services/auth/migrations/0007_oidc_payloads_account.sql': ['require-concurrent-index-creation'],
  'services/auth/migrations/0009_password_resets_and_security_mails.sql': ['prefer-bigint-over-int'],
  'services/auth/migrations/0010_email_verification.sql': ['constraint-missing-not-valid'],
  'services/auth/migrations/0011_security_mails_retention.sql': [
    'constraint-missing-not-valid',
    'require-concurrent-index-creation',
  ],
  'services/content/migrations/0001_posts.sql': ['prefer-bigint-over-int'],
  'services/inventory/migrations/0001_products_and_reservations.sql': ['prefer-bigint-over-int'],
  'services/notification/migrations/0002_order_placed_notifications.sql': ['constraint-missing-not-valid'],
  'services/notification/migrations/0003_return_notifications.sql': ['constraint-missing-not-valid'],
  'services/notification/migrations/0004_email_and_preferences.sql': ['prefer-bigint-over-int'],
  'services/notification/migrations/0005_email_deliveries_retention.sql': [
    'constraint-missing-not-valid',
    'require-concurrent-index-creation',
  ],
  'services/order/migrations/0001_orders.sql': ['prefer-bigint-over-int'],
  'services/order/migrations/0002_sagas.sql': ['prefer-bigint-over-int', 'prefer-identity'],
  'services/order/migrations/0003_order_idempotency_keys.sql': [
    'constraint-missing-not-valid',
    'require-concurrent-index-creation',
  ],
  'services/order/migrations/0004_sagas_on_process_module.sql': [
    'ban-drop-table',
    'require-concurrent-index-creation',
  ],
  'services/order/migrations/0005_returns.sql': ['prefer-bigint-over-int'],
  'services/order/migrations/0007_saga_authenticate_url.sql': ['constraint-missing-not-valid'],
  'services/payment/migrations/0001_payments_and_idempotency_keys.sql': ['prefer-bigint-over-int'],
  'services/payment/migrations/0004_orders_and_one_charge_per_order.sql': [
    'adding-foreign-key-constraint',
    'adding-not-nullable-field',
    'constraint-missing-not-valid',
    'require-concurrent-index-creation',
  ],
  'services/payment/migrations/0006_return_refund_declines.sql': ['prefer-bigint-over-int'],
  'services/payment/migrations/0008_charge_authentication.sql': [
    'constraint-missing-not-valid',
    'require-concurrent-index-creation',
  ],
  'services/payment/migrations/0009_provider_refunds_and_disputes.sql': ['require-concurrent-index-creation'],
  'services/realtime-gateway/migrations/0002_documents.sql': ['prefer-bigint-over-int'],
  'services/shipping/migrations/0001_shipments.sql': ['prefer-bigint-over-int'],
}
