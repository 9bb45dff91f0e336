/** The breaker's pure decisions (SPEC §7), as every store of tasks calls them. */
import { describe, expect, it } from "vitest"
import { Breaker } from "../src/index.ts"

const policy = Breaker.resolve({
  failures: 2,
  coolDown: 100,
  factor: 2,
  maxCoolDown: 300,
}) as Breaker.Resolved

describe("combinators", () => {
  it("an opening's cool-down grows by the factor, capped, and says when it goes half-open", () => {
    expect(Breaker.opening(policy, 1, 1_000)).toEqual({ coolDown: 100, halfOpenAt: 1_100 })
    expect(Breaker.opening(policy, 2, 1_000)).toEqual({ coolDown: 200, halfOpenAt: 1_200 })
    expect(Breaker.opening(policy, 3, 1_000)).toEqual({ coolDown: 300, halfOpenAt: 1_300 })
  })

  it("a joining task: nothing while closed, the probe of a half-open breaker without one, else held", () => {
    expect(Breaker.onJoin("closed", false, true)).toBe("none")
    expect(Breaker.onJoin("half-open", false, true)).toBe("probe")
    expect(Breaker.onJoin("half-open", true, true)).toBe("hold")
    expect(Breaker.onJoin("half-open", false, false)).toBe("hold")
    expect(Breaker.onJoin("open", false, true)).toBe("hold")
  })

  it("the probe is the held task that would run first: due time, then priority", () => {
    expect(Breaker.probeBefore({ dueAt: 5, rank: 2 }, { dueAt: 6, rank: 0 })).toBe(true)
    expect(Breaker.probeBefore({ dueAt: 5, rank: 0 }, { dueAt: 5, rank: 1 })).toBe(true)
    expect(Breaker.probeBefore({ dueAt: 5, rank: 1 }, { dueAt: 5, rank: 1 })).toBe(false)
  })

  it("leaving a breaker releases a held task unless the one it joins is open or half-open", () => {
    expect(Breaker.releasedOnLeave(undefined)).toBe(true)
    expect(Breaker.releasedOnLeave("closed")).toBe(true)
    expect(Breaker.releasedOnLeave("open")).toBe(false)
    expect(Breaker.releasedOnLeave("half-open")).toBe(false)
  })
})
