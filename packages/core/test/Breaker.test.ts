/** The breaker's pure decisions (SPEC §7), as every store of tasks calls them. */
import { describe, expect, it } from "vitest"
import { Breaker, Errors } from "../src/index.ts"

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

  it("the probe is the held task that would run first: due time, then priority, then id", () => {
    expect(
      Breaker.probeBefore({ dueAt: 5, rank: 2, id: "z" }, { dueAt: 6, rank: 0, id: "a" }),
    ).toBe(true)
    expect(
      Breaker.probeBefore({ dueAt: 5, rank: 0, id: "z" }, { dueAt: 5, rank: 1, id: "a" }),
    ).toBe(true)
    expect(
      Breaker.probeBefore({ dueAt: 5, rank: 1, id: "a" }, { dueAt: 5, rank: 1, id: "b" }),
    ).toBe(true)
    expect(
      Breaker.probeBefore({ dueAt: 5, rank: 1, id: "b" }, { dueAt: 5, rank: 1, id: "a" }),
    ).toBe(false)
    expect(
      Breaker.probeBefore({ dueAt: 5, rank: 1, id: "a" }, { dueAt: 5, rank: 1, id: "a" }),
    ).toBe(false)
  })

  it("leaving a breaker unholds a held task unless the one it joins is open or half-open", () => {
    expect(Breaker.unheldOnLeave(undefined)).toBe(true)
    expect(Breaker.unheldOnLeave("closed")).toBe(true)
    expect(Breaker.unheldOnLeave("open")).toBe(false)
    expect(Breaker.unheldOnLeave("half-open")).toBe(false)
  })
})

const held = (id: string, resumeAt: number, rank = 1): Breaker.Member => ({
  id,
  state: "paused",
  pausedReason: "breaker",
  pauseRequest: undefined,
  rank,
  resumeAt,
})
const scheduled = (id: string): Breaker.Member => ({
  id,
  state: "scheduled",
  pausedReason: undefined,
  pauseRequest: undefined,
  rank: 1,
  resumeAt: 0,
})
const running = (id: string, pauseRequest?: "manual" | "breaker"): Breaker.Member => ({
  id,
  state: "running",
  pausedReason: undefined,
  pauseRequest,
  rank: 1,
  resumeAt: 0,
})
const cell = (state: Breaker.BreakerState, probe?: string, shared = true): Breaker.Cell => ({
  status: { state, failures: state === "closed" ? 1 : 2, opens: state === "closed" ? 0 : 1 },
  policy,
  shared,
  probe,
})

describe("step", () => {
  it("a slot that opens the breaker holds every other scheduled or running member", () => {
    const plan = Breaker.step(
      cell("closed"),
      { _tag: "SlotEnded", task: "a", failed: true },
      [
        running("a"),
        scheduled("b"),
        running("c"),
        running("d", "manual"),
        { ...held("e", 0), pausedReason: "manual" },
      ],
      1_000,
    )
    expect(plan.status).toEqual({ state: "open", failures: 2, opens: 1 })
    expect(plan.transition).toEqual({
      from: "closed",
      to: "open",
      coolDown: 100,
      halfOpenAt: 1_100,
    })
    expect(plan.hold).toEqual(["b", "c"])
    expect(plan.unhold).toEqual([])
    expect(plan.probe).toBeUndefined()
  })

  it("a slot that does not change the state only counts it, and reads no members", () => {
    const c = cell("closed")
    const event = { _tag: "SlotEnded", task: "a", failed: false } as const
    expect(Breaker.readsMembers({ ...c, status: { ...c.status, failures: 0 } }, event)).toBe(false)
    const plan = Breaker.step(c, event, [], 5)
    expect(plan.status).toEqual({ state: "closed", failures: 0, opens: 0 })
    expect([plan.transition, plan.hold, plan.unhold]).toEqual([undefined, [], []])
  })

  it("the probe's success closes the breaker and unholds its held tasks and the breaker's pause requests", () => {
    const plan = Breaker.step(
      cell("half-open", "p"),
      { _tag: "SlotEnded", task: "p", failed: false },
      [running("p"), held("a", 10), running("b", "breaker"), running("c", "manual")],
      50,
    )
    expect(plan.status.state).toBe("closed")
    expect(plan.unhold).toEqual(["a", "b"])
    expect(plan.probe).toBeUndefined()
  })

  it("a non-probe's slot does not move a half-open breaker", () => {
    const plan = Breaker.step(
      cell("half-open", "p"),
      { _tag: "SlotEnded", task: "x", failed: true },
      [],
      50,
    )
    expect([plan.transition, plan.probe]).toEqual([undefined, "p"])
  })

  it("when the cool-down ends the held task due first probes; ties go to priority, then the smaller id", () => {
    const plan = Breaker.step(
      cell("open"),
      { _tag: "CoolDownEnded" },
      [held("c", 30), held("b", 20), held("a", 20, 2), scheduled("s")],
      100,
    )
    expect(plan.status.state).toBe("half-open")
    expect(plan.probe).toBe("b")
    expect(plan.unhold).toEqual(["b"])
    // The same members in another order pick the same probe: the order is total.
    const reversed = Breaker.step(
      cell("open"),
      { _tag: "CoolDownEnded" },
      [held("b2", 20), held("b1", 20)].reverse(),
      100,
    )
    expect(reversed.probe).toBe("b1")
    expect(
      Breaker.step(cell("open"), { _tag: "CoolDownEnded" }, [held("b1", 20), held("b2", 20)], 100)
        .probe,
    ).toBe("b1")
  })

  it("the cool-down ends with nothing held: half-open without a probe, and the next task to join probes", () => {
    const plan = Breaker.step(cell("open"), { _tag: "CoolDownEnded" }, [scheduled("s")], 100)
    expect([plan.status.state, plan.probe, plan.unhold]).toEqual(["half-open", undefined, []])
    const joined = Breaker.step(
      cell("half-open"),
      { _tag: "Joined", task: "n" },
      [scheduled("n")],
      1,
    )
    expect(joined.probe).toBe("n")
    expect(joined.hold).toEqual([])
  })

  it("a task joining an open breaker is held; a running one is asked to pause; a paused one is left", () => {
    const c = cell("open")
    expect(Breaker.step(c, { _tag: "Joined", task: "n" }, [scheduled("n")], 1).hold).toEqual(["n"])
    expect(Breaker.step(c, { _tag: "Joined", task: "n" }, [running("n")], 1).hold).toEqual(["n"])
    expect(
      Breaker.step(c, { _tag: "Joined", task: "n" }, [running("n", "manual")], 1).hold,
    ).toEqual([])
    expect(
      Breaker.step(cell("closed"), { _tag: "Joined", task: "n" }, [scheduled("n")], 1).hold,
    ).toEqual([])
  })

  it("a probe that leaves, or is paused by hand, is replaced by the held task due first", () => {
    const members = [
      held("a", 30),
      held("b", 20),
      { ...held("m", 0), pausedReason: "manual" as const },
    ]
    for (const event of [
      { _tag: "Left", task: "p" },
      { _tag: "PausedByHand", task: "p" },
    ] as const) {
      expect(Breaker.readsMembers(cell("half-open", "p"), event)).toBe(true)
      const plan = Breaker.step(cell("half-open", "p"), event, members, 10)
      expect([plan.probe, plan.unhold, plan.transition]).toEqual(["b", ["b"], undefined])
    }
  })

  it("a task that is not the probe leaves without a change; a task's own breaker is dropped with it", () => {
    const plan = Breaker.step(cell("half-open", "p"), { _tag: "Left", task: "x" }, [], 10)
    expect([plan.probe, plan.drop, plan.unhold]).toEqual(["p", false, []])
    const own = Breaker.step(cell("half-open", "p", false), { _tag: "Left", task: "p" }, [], 10)
    expect([own.probe, own.drop, own.unhold]).toEqual([undefined, true, []])
  })
})

describe("lookup", () => {
  it("a name is looked up in the shared breakers, a policy resolved; one error for an unknown name", () => {
    const shared = new Map([["smtp", 1]])
    expect(Breaker.lookup("smtp", shared)).toEqual({ _tag: "Shared", name: "smtp", breaker: 1 })
    expect(Breaker.lookup({ failures: 2, coolDown: 100 }, shared)).toMatchObject({
      _tag: "Own",
      policy: { failures: 2, coolDown: 100 },
    })
    const unknown = Breaker.lookup("nope", shared)
    expect(unknown).toBeInstanceOf(Errors.InvalidOption)
    expect(unknown).toMatchObject({
      field: "breaker",
      value: "nope",
      message: 'breaker "nope" is not defined (defined: smtp)',
    })
    expect(Breaker.lookup({ failures: 0, coolDown: 100 }, shared)).toBeInstanceOf(
      Errors.InvalidOption,
    )
  })
})
