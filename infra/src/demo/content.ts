// What the demo data is: its two accounts (with fixed, public development passwords), the catalogue, the chat room
// and its conversation, and the document. The seed finds each again by these names, which makes it idempotent.

export interface DemoAccount {
  role: 'admin' | 'user'
  name: string
  email: string
  /** a fixed development value, printed and documented: the demo is for a machine nobody else reaches */
  password: string
}

export const demoAdmin: DemoAccount = {
  role: 'admin',
  name: 'Demo Admin',
  email: 'demo-admin@example.com',
  password: 'demo-admin-password',
}

export const demoCustomer: DemoAccount = {
  role: 'user',
  name: 'Demo Customer',
  email: 'demo-customer@example.com',
  password: 'demo-customer-password',
}

/**
 * What the console's sign-in page says under ./scripts/dev --demo (the gateway's CONSOLE_SIGN_IN_HINT, which a
 * production gateway refuses): the demo accounts, passwords included, as they are public development values.
 */
export const demoSignInHint =
  'Demo data (./scripts/dev --demo): sign in as the customer ' +
  `${demoCustomer.email} (password ${demoCustomer.password}) or the admin ${demoAdmin.email} ` +
  `(password ${demoAdmin.password}). Development passwords: never on a system others reach.`

export interface DemoProduct {
  sku: string
  name: string
  description: string
  price: number
  stock: number
}

export const demoProducts: readonly DemoProduct[] = [
  {
    sku: 'DEMO-MUG',
    name: 'Meridian mug',
    description: 'Stoneware, 350 ml',
    price: 12.5,
    stock: 120,
  },
  {
    sku: 'DEMO-TEE',
    name: 'Meridian T-shirt',
    description: 'Organic cotton, navy',
    price: 24,
    stock: 80,
  },
  {
    sku: 'DEMO-NOTEBOOK',
    name: 'Dot-grid notebook',
    description: 'A5, 120 pages',
    price: 9.9,
    stock: 200,
  },
  {
    sku: 'DEMO-STICKERS',
    name: 'Sticker pack',
    description: 'Six vinyl stickers',
    price: 4.5,
    stock: 500,
  },
  {
    sku: 'DEMO-HOODIE',
    name: 'Meridian hoodie',
    description: 'Heavyweight, grey',
    price: 49,
    stock: 40,
  },
]

/** The simulator's test cards (infra/src/payment-simulator/cards.ts) the demo's orders are paid with. */
export const demoCards = { good: '4242424242424242', declined: '4000000000000002' } as const

export const demoShippingAddress = { street: '1 Demo Street', city: 'Sampletown', zip: '10001' }

export const demoRoomName = 'Demo lounge'

/** Who says what in the demo room, in order. */
export const demoConversation: readonly { from: 'admin' | 'customer'; text: string }[] = [
  { from: 'admin', text: 'Welcome to Meridian! This room is for questions about your orders.' },
  { from: 'customer', text: 'Hi! My mug arrived, the hoodie is on its way.' },
  { from: 'admin', text: 'Great. Shipped orders move to delivered once the carrier confirms.' },
  { from: 'customer', text: 'And the order my card declined?' },
  { from: 'admin', text: 'It waits as payment_failed: pay it again or cancel it from the Orders view.' },
]

export const demoDocumentTitle = 'Welcome to Meridian'

export const demoDocumentContent = `# Welcome to Meridian

This document is shared by the demo admin with the demo customer. Open it in two browser windows (one signed in
as each account) and type in both: the edits meet on the realtime channel.

- Orders: a catalogue of five products, and orders that were delivered, shipped, declined and cancelled.
- Chat: the "${demoRoomName}" room.
- Posts: write one, and watch it appear for everyone signed in.
`
