/**
 * SPEC §20.1: a durable store's per-handler scope (`handler:<name>`). The kernel has no handler
 * names, so `resolveLimits` takes `handlers` only when a store asks for it.
 */
import { describe, expect, it } from "vitest"
import { Errors, Rules } from "../../src/index.ts"

describe("SPEC §20.1 handler scopes (durable stores)", () => {
  it("handlers is an unknown key unless asked for; asked for, each limit is checked by name", () => {
    const plain = Rules.resolveLimits({ handlers: { mail: { concurrency: 1 } } })
    expect(plain).toBeInstanceOf(Errors.InvalidOption)
    expect((plain as Errors.InvalidOption).field).toBe("limits.handlers")
    const bad = Rules.resolveLimits({ handlers: { mail: { concurrency: 0 } } }, "limits", {
      handlers: true,
    })
    expect(bad).toBeInstanceOf(Errors.InvalidOption)
    expect([(bad as Errors.InvalidOption).field, (bad as Errors.InvalidOption).value]).toEqual([
      "limits.handlers.mail.concurrency",
      0,
    ])
    const notObject = Rules.resolveLimits({ handlers: [] }, "limits", { handlers: true })
    expect((notObject as Errors.InvalidOption).field).toBe("limits.handlers")
  })

  it("a task of a limited handler is in scope handler:<name> first; other handlers are in none", () => {
    const limits = Rules.resolveLimits(
      { handlers: { mail: { concurrency: 2 } }, groups: { g: { concurrency: 1 } }, keys: {} },
      "limits",
      { handlers: true },
    ) as Rules.ResolvedLimits
    expect(Rules.scopesOf("g", "k", limits, "mail")).toEqual(["handler:mail", "group:g", "key:k"])
    expect(Rules.scopesOf(undefined, undefined, limits, "sms")).toEqual([])
    expect(Rules.limitOf(limits, "handler:mail")?.concurrency).toBe(2)
    expect(Rules.limitOf(limits, "handler:sms")).toBeUndefined()
    expect(Rules.limitOf(limits, "nothing:x")).toBeUndefined()
  })
})
