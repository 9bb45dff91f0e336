import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Errors, Random, Retry } from "../src/index.ts"

const resolved = (policy: Retry.RetryPolicy): Retry.Resolved => {
  const r = Retry.resolve(policy)
  if (!("maxRetries" in r)) throw new Error(r.message)
  return r
}

/** A Random that returns the given values in turn and counts its draws. */
const scripted = (...values: Array<number>) => {
  let draws = 0
  return {
    random: { next: () => values[draws++ % values.length] as number },
    draws: () => draws,
  }
}

describe("constructors", () => {
  it("no policy means no retries", () => {
    expect(Retry.resolve(undefined)).toBe(Retry.none)
    expect(Retry.none.maxRetries).toBe(0)
  })

  it("fills in the documented defaults: base 1 s, factor 2, no cap, no jitter", () => {
    expect(resolved({ maxRetries: 3 })).toEqual({
      maxRetries: 3,
      base: 1000,
      factor: 2,
      maxDelay: Number.MAX_SAFE_INTEGER,
      jitter: "none",
    })
  })

  it("accepts Effect durations for base and maxDelay", () => {
    const p = resolved({ maxRetries: 1, base: "250 millis", maxDelay: "1 minute" })
    expect(p.base).toBe(250)
    expect(p.maxDelay).toBe(60_000)
  })

  it.each([
    [{ maxRetries: -1 }, "retry.maxRetries", -1],
    [{ maxRetries: 1.5 }, "retry.maxRetries", 1.5],
    [{ maxRetries: Number.NaN }, "retry.maxRetries", Number.NaN],
    [{ base: -5 }, "retry.base", -5],
    [{ base: "1.5 millis" }, "retry.base", "1.5 millis"],
    [{ factor: 0.5 }, "retry.factor", 0.5],
    [{ factor: Number.POSITIVE_INFINITY }, "retry.factor", Number.POSITIVE_INFINITY],
    [{ factor: "2" }, "retry.factor", "2"],
    [{ maxDelay: -1 }, "retry.maxDelay", -1],
    [{ jitter: "half" }, "retry.jitter", "half"],
  ] as Array<[Retry.RetryPolicy, string, unknown]>)(
    "rejects %o naming %s",
    (policy, field, value) => {
      const e = Retry.resolve(policy) as Errors.InvalidRetryPolicy
      expect(e._tag).toBe("InvalidRetryPolicy")
      expect(e.field).toBe(field)
      expect(Object.is(e.value, value)).toBe(true)
      expect(e.message).toContain(field)
    },
  )

  it("rejects a policy that is not an object", () => {
    expect(Retry.resolve(5 as never)).toMatchObject({ _tag: "InvalidRetryPolicy", field: "retry" })
  })
})

describe("combinators", () => {
  it("backoff is base * factor^(retry-1), capped by maxDelay (the module's example)", () => {
    const p = resolved({ maxRetries: 5, base: 100, maxDelay: 1000 })
    const r = scripted(0.5)
    expect([1, 2, 3, 4, 5].map((n) => Retry.backoff(p, n, r.random))).toEqual([
      100, 200, 400, 800, 1000,
    ])
    expect(r.draws()).toBe(0) // no jitter, no draw
  })

  it("a factor of 1 gives a constant delay; a fractional factor is floored to whole ms", () => {
    const constant = resolved({ maxRetries: 3, base: 70, factor: 1 })
    expect([1, 2, 3].map((n) => Retry.backoff(constant, n, Random.seeded(0)))).toEqual([70, 70, 70])
    const growing = resolved({ maxRetries: 4, base: 100, factor: 1.5 })
    // 100, 150, 225, 337.5 -> 337
    expect([1, 2, 3, 4].map((n) => Retry.backoff(growing, n, Random.seeded(0)))).toEqual([
      100, 150, 225, 337,
    ])
  })

  it("a huge retry number stays a safe integer (capped at maxDelay, or at 2^53-1)", () => {
    expect(Retry.backoff(resolved({ base: 1000 }), 5000, Random.seeded(0))).toBe(
      Number.MAX_SAFE_INTEGER,
    )
    expect(Retry.backoff(resolved({ base: 1000, maxDelay: 60_000 }), 5000, Random.seeded(0))).toBe(
      60_000,
    )
  })

  it("full jitter draws once and spans [0, backoff]", () => {
    const p = resolved({ maxRetries: 1, base: 100, jitter: "full" })
    const low = scripted(0)
    expect(Retry.backoff(p, 1, low.random)).toBe(0)
    expect(low.draws()).toBe(1)
    expect(Retry.backoff(p, 1, scripted(0.999_999_9).random)).toBe(100)
    expect(Retry.backoff(p, 2, scripted(0.5).random)).toBe(100) // floor(0.5 * 201)
  })

  it("equal jitter draws once and spans [ceil(backoff/2), backoff]", () => {
    const p = resolved({ maxRetries: 1, base: 101, jitter: "equal" })
    const low = scripted(0)
    expect(Retry.backoff(p, 1, low.random)).toBe(51)
    expect(low.draws()).toBe(1)
    expect(Retry.backoff(p, 1, scripted(0.999_999_9).random)).toBe(101)
  })

  it("any valid policy gives a whole delay within its jitter's bounds", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: undefined }),
        fc.constantFrom<Retry.Jitter>("none", "full", "equal"),
        fc.integer({ min: 1, max: 60 }),
        fc.integer(),
        (base, factor, maxDelay, jitter, retry, seed) => {
          const p = resolved({
            maxRetries: 1,
            base,
            factor,
            jitter,
            ...(maxDelay === undefined ? {} : { maxDelay }),
          })
          const cap = Math.floor(
            Math.min(maxDelay ?? Number.MAX_SAFE_INTEGER, base * factor ** (retry - 1)),
          )
          const d = Retry.backoff(p, retry, Random.seeded(seed))
          expect(Number.isSafeInteger(d)).toBe(true)
          const lower = jitter === "none" ? cap : jitter === "full" ? 0 : Math.ceil(cap / 2)
          expect(d).toBeGreaterThanOrEqual(lower)
          expect(d).toBeLessThanOrEqual(cap)
          // Same seed, same delay.
          expect(Retry.backoff(p, retry, Random.seeded(seed))).toBe(d)
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe("resolve: each refusal's sentence (SPEC §13)", () => {
  it("SPEC §13: names the field, the rule and the value given", () => {
    const message = (policy: unknown) =>
      (Retry.resolve(policy as never) as Errors.InvalidRetryPolicy).message
    expect(message(null)).toBe("retry must be an object, got null")
    expect(message(5)).toBe("retry must be an object, got 5")
    expect(message({ maxRetries: -1 })).toBe(
      "retry.maxRetries must be a non-negative integer, got -1",
    )
    expect(message({ base: -5 })).toBe("retry.base must not be negative, got -5")
    expect(message({ factor: 0.5 })).toBe("retry.factor must be a finite number >= 1, got 0.5")
    expect(message({ maxDelay: 1.5 })).toBe(
      "retry.maxDelay must be a whole number of milliseconds, got 1.5",
    )
    expect(message({ jitter: "half" })).toBe(
      'retry.jitter must be "none", "full" or "equal", got "half"',
    )
    expect(Retry.resolve({ tries: 2 } as never)).toMatchObject({
      _tag: "InvalidOption",
      field: "retry.tries",
    })
  })

  it("SPEC §7: each jitter and a maxRetries of 0 are accepted as given", () => {
    for (const jitter of ["none", "full", "equal"] as const) {
      expect(resolved({ maxRetries: 0, jitter }).jitter).toBe(jitter)
    }
    expect(resolved({ maxRetries: 0 })).toEqual(Retry.none)
    expect(resolved({ maxRetries: 0, maxDelay: 5 }).maxDelay).toBe(5)
  })
})

describe("resolve: no retries, other fields given (SPEC §7)", () => {
  it("SPEC §7: a base or a factor given with no retries is kept as given, not dropped for the default", () => {
    expect(resolved({ base: 500 })).toEqual({ ...Retry.none, base: 500 })
    expect(resolved({ maxRetries: 0, factor: 3 })).toEqual({ ...Retry.none, factor: 3 })
    expect(resolved({})).toEqual(Retry.none)
  })
})
