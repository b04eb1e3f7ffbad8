// Registries (src/platform/registry.ts) and the ones the composition root plugs every product into:
// a key is registered once and only if its module declared it, handlers are called in the declared
// order whatever the order of registration, and app.ts plugs in exactly the products that make
// payouts, ask for refunds, own intents and settle collections. No database.
import { describe, expect, it } from 'vitest'
import { pluggedRegistries } from '../../src/app.ts'
import { Registry } from '../../src/platform/registry.ts'

describe('a registry', () => {
  it('calls its handlers in the declared order, not the order they were registered in', () => {
    const registry = new Registry<'a' | 'b' | 'c', string>('letters', ['a', 'b', 'c'])
    registry.register('c', 'third')
    registry.register('a', 'first')
    expect(registry.registered()).toEqual([
      ['a', 'first'],
      ['c', 'third'],
    ])
    expect(registry.get('b')).toBeUndefined()
    expect(registry.handlers).toEqual({ a: 'first', c: 'third' })
  })

  it('refuses a key registered twice, and a key its module did not declare', () => {
    const registry = new Registry<'a' | 'b', number>('numbers', ['a'])
    registry.register('a', 1)
    expect(() => registry.register('a', 2)).toThrow('numbers: a is registered twice')
    expect(() => registry.register('b', 3)).toThrow('numbers: no such key b')
    expect(registry.get('a')).toBe(1)
  })
})

describe('the registries app.ts plugs the products into', () => {
  it('has every origin, owner and settlement registered, in the order their modules call them', () => {
    const registries = pluggedRegistries()
    const keys = <K extends string, H>(registry: Registry<K, H>) => registry.registered().map(([key]) => key)
    expect(keys(registries.origins)).toEqual(['refund', 'escrow', 'settlement'])
    expect(keys(registries.refundOrigins)).toEqual(['escrow', 'triage'])
    expect(keys(registries.creditOwners)).toEqual(['invoice', 'escrow'])
    expect(keys(registries.collected)).toEqual(['settlement'])
  })
})
