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

describe("decisions at their edges", () => {
  it("a failed slot opens a closed breaker at its n-th failure, a half-open one only on its probe", () => {
    const closed = { state: "closed", failures: 1, opens: 0 } as const
    expect(Breaker.opensOnFailure(closed, policy, false)).toBe(true)
    expect(Breaker.opensOnFailure({ ...closed, failures: 0 }, policy, false)).toBe(false)
    const halfOpen = { state: "half-open", failures: 5, opens: 1 } as const
    expect(Breaker.opensOnFailure(halfOpen, policy, false)).toBe(false)
    expect(Breaker.opensOnFailure(halfOpen, policy, true)).toBe(true)
    expect(Breaker.opensOnFailure({ state: "open", failures: 5, opens: 1 }, policy, true)).toBe(
      false,
    )
  })

  it("an open breaker ignores slots, even one said to be a probe; a clean closed one is unchanged", () => {
    const open = { state: "open", failures: 2, opens: 1 } as const
    expect(Breaker.afterSlot(open, policy, true, true)).toBe(open)
    expect(Breaker.afterSlot(open, policy, true, false)).toBe(open)
    // A success on a closed breaker with no failures counted is the same status (nothing to write).
    const clean = { state: "closed", failures: 0, opens: 0 } as const
    expect(Breaker.afterSlot(clean, policy, false, false)).toBe(clean)
  })

  it("a later due time never probes first, whatever its priority", () => {
    expect(
      Breaker.probeBefore({ dueAt: 6, rank: 0, id: "a" }, { dueAt: 5, rank: 2, id: "z" }),
    ).toBe(false)
  })

  it("readsMembers: only when the state changes or the probe is replaced; always for a join", () => {
    const slot = (task: string, failed: boolean) => ({ _tag: "SlotEnded", task, failed }) as const
    expect(Breaker.readsMembers(cell("half-open", "p"), slot("x", true))).toBe(false)
    expect(Breaker.readsMembers(cell("half-open", "p"), slot("p", true))).toBe(true)
    expect(Breaker.readsMembers(cell("closed"), { _tag: "CoolDownEnded" })).toBe(false)
    expect(Breaker.readsMembers(cell("half-open"), { _tag: "CoolDownEnded" })).toBe(false)
    expect(Breaker.readsMembers(cell("open"), { _tag: "CoolDownEnded" })).toBe(true)
    expect(Breaker.readsMembers(cell("closed"), { _tag: "Joined", task: "n" })).toBe(true)
    const left = { _tag: "Left", task: "p" } as const
    const byHand = { _tag: "PausedByHand", task: "p" } as const
    expect(Breaker.readsMembers(cell("half-open", "q"), left)).toBe(false)
    expect(Breaker.readsMembers(cell("open", "p"), byHand)).toBe(false)
    // A task's own breaker is dropped when its task leaves: nothing to pick.
    expect(Breaker.readsMembers(cell("half-open", "p", false), left)).toBe(false)
    expect(Breaker.readsMembers(cell("half-open", "p", false), byHand)).toBe(true)
  })
})

describe("step at its edges", () => {
  it("no plan drops the breaker but a task's own one whose task left", () => {
    expect(Breaker.step(cell("closed"), { _tag: "CoolDownEnded" }, [], 1).drop).toBe(false)
    expect(
      Breaker.step(cell("half-open", "p", false), { _tag: "PausedByHand", task: "p" }, [], 1).drop,
    ).toBe(false)
  })

  it("the task whose slot ended is never in its own plan's unhold list", () => {
    const plan = Breaker.step(
      cell("half-open", "p"),
      { _tag: "SlotEnded", task: "p", failed: false },
      [running("p", "breaker"), held("a", 10)],
      50,
    )
    expect(plan.unhold).toEqual(["a"])
  })

  it("the cool-down's end moves only an open breaker", () => {
    const closed = cell("closed")
    const plan = Breaker.step(closed, { _tag: "CoolDownEnded" }, [held("a", 1)], 5)
    expect([plan.status, plan.transition, plan.unhold, plan.probe]).toEqual([
      closed.status,
      undefined,
      [],
      undefined,
    ])
  })

  it("a join reads the joining task's member only; a task with no member changes nothing", () => {
    const c = cell("open")
    expect(
      Breaker.step(c, { _tag: "Joined", task: "n" }, [running("x", "manual"), scheduled("n")], 1)
        .hold,
    ).toEqual(["n"])
    expect(Breaker.step(c, { _tag: "Joined", task: "n" }, [], 1)).toMatchObject({
      hold: [],
      probe: undefined,
    })
    // Paused by hand, it is left as it is.
    const byHand = { ...held("n", 0), pausedReason: "manual" as const }
    expect(Breaker.step(c, { _tag: "Joined", task: "n" }, [byHand], 1).hold).toEqual([])
  })

  it("a half-open breaker with a probe holds a joiner; without one, only a scheduled joiner probes", () => {
    const withProbe = Breaker.step(
      cell("half-open", "p"),
      { _tag: "Joined", task: "n" },
      [scheduled("n")],
      1,
    )
    expect([withProbe.probe, withProbe.hold]).toEqual(["p", ["n"]])
    const runningJoiner = Breaker.step(
      cell("half-open"),
      { _tag: "Joined", task: "n" },
      [running("n")],
      1,
    )
    expect([runningJoiner.probe, runningJoiner.hold]).toEqual([undefined, ["n"]])
  })

  it("a probe that leaves with no held task to replace it leaves the breaker without a probe", () => {
    const plan = Breaker.step(
      cell("half-open", "p"),
      { _tag: "Left", task: "p" },
      [scheduled("s")],
      1,
    )
    expect([plan.probe, plan.unhold, plan.drop]).toEqual([undefined, [], false])
  })
})

describe("resolve and lookup: errors name the field and the value", () => {
  it("a policy that is no object, a bad count or factor", () => {
    const message = (p: unknown, field?: string) =>
      (Breaker.resolve(p as never, field) as Errors.InvalidOption).message
    expect(message("fast")).toBe(
      'breaker must be a breaker policy object or a breaker\'s name, got "fast"',
    )
    expect((Breaker.resolve(null as never) as Errors.InvalidOption).field).toBe("breaker")
    expect(message({ failures: 0, coolDown: 10 }, "breakers.smtp")).toBe(
      "breakers.smtp.failures must be a positive integer, got 0",
    )
    expect(message({ failures: 1, coolDown: 10, factor: "2" })).toBe(
      'breaker.factor must be a finite number >= 1, got "2"',
    )
    for (const factor of [Number.POSITIVE_INFINITY, Number.NaN, 0.5]) {
      expect(
        (Breaker.resolve({ failures: 1, coolDown: 10, factor }) as Errors.InvalidOption).field,
      ).toBe("breaker.factor")
    }
  })

  it("an unknown name lists the breakers defined, or says there are none", () => {
    const two = new Map([
      ["smtp", 1],
      ["s3", 2],
    ])
    expect((Breaker.lookup("sms", two) as Errors.InvalidOption).message).toBe(
      'breaker "sms" is not defined (defined: smtp, s3)',
    )
    expect((Breaker.lookup("sms", new Map()) as Errors.InvalidOption).message).toBe(
      'breaker "sms" is not defined (defined: none)',
    )
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
