// W3C baggage, only the entries a deployment named (TRACING_BAGGAGE_KEYS; none by default). Baggage is whatever the
// caller says, carried to every service a request reaches and readable by each: a client's 8 KB of it once went to all
// of them. Entries not allowed are dropped where the request comes in, so nothing carries them further.
import {
  type Context,
  propagation,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
} from '@opentelemetry/api'
import { W3CBaggagePropagator } from '@opentelemetry/core'

export class AllowedBaggagePropagator implements TextMapPropagator {
  readonly #w3c = new W3CBaggagePropagator()
  readonly #allowed: ReadonlySet<string>

  constructor(allowed: readonly string[]) {
    this.#allowed = new Set(allowed)
  }

  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    if (this.#allowed.size > 0) this.#w3c.inject(context, carrier, setter)
  }

  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    if (this.#allowed.size === 0) return context
    const extracted = this.#w3c.extract(context, carrier, getter)
    const baggage = propagation.getBaggage(extracted)
    if (!baggage) return context
    let kept = baggage
    for (const [key] of baggage.getAllEntries()) if (!this.#allowed.has(key)) kept = kept.removeEntry(key)
    return kept.getAllEntries().length > 0 ? propagation.setBaggage(extracted, kept) : context
  }

  fields(): string[] {
    return this.#allowed.size > 0 ? this.#w3c.fields() : []
  }
}
