/**
 * Declared tasks (SPEC §18): the decision `ensure` makes for one declared task, pure, with
 * explicit `now`.
 */
import { Cron } from "effect"
import { describe, expect, it } from "vitest"
import { Breaker, Declared, Errors, Kernel, Schedule } from "../src/index.ts"

const def = (
  options: Parameters<typeof Declared.definitionOf>[0],
  now = 0,
  more: Record<string, unknown> = {},
): Declared.Definition => {
  const d = Declared.definitionOf(options, now, more)
  if (!("plan" in d)) throw new Error(d.message)
  return d
}

const live = (definition: Declared.Definition): Declared.Current => ({
  state: "scheduled",
  definition,
})

describe("constructors", () => {
  it("SPEC §18.1: an absent task is created; a final one gets a new generation", () => {
    const d = def({ schedule: Schedule.fixedRate(60_000) })
    expect(Declared.decide(d, undefined)).toEqual({ _tag: "create", previous: "absent" })
    for (const state of ["done", "failed", "cancelled"] as const) {
      expect(Declared.decide(d, { state, definition: d })).toEqual({
        _tag: "create",
        previous: state,
      })
    }
  })

  it("SPEC §18.1: the same declaration at a later boot is unchanged (the grid is not moved)", () => {
    const first = def({ schedule: Schedule.fixedRate(60_000, { delay: 5 }) }, 0)
    const later = def({ schedule: Schedule.fixedRate(60_000, { delay: 5 }) }, 9_999_999)
    expect(Declared.decide(later, live(first))).toEqual({ _tag: "unchanged" })
    // A one-shot given as a delay counts from its first acceptance; one given as an instant is
    // compared by that instant.
    expect(
      Declared.decide(
        def({ schedule: Schedule.once(10) }, 500),
        live(def({ schedule: Schedule.once(10) })),
      ),
    ).toEqual({ _tag: "unchanged" })
    expect(
      Declared.decide(
        def({ schedule: Schedule.at(20) }),
        live(def({ schedule: Schedule.once(10) })),
      ),
    ).toEqual({ _tag: "update", fields: ["schedule"] })
  })

  it("SPEC §18.1: equivalent cron expressions are one schedule; a new zone is a change", () => {
    const a = def({ schedule: Schedule.cron("0 9 * * 1-5", { timeZone: "Europe/Paris" }) })
    const b = def({ schedule: Schedule.cron("0 9 * * MON-FRI", { timeZone: "Europe/Paris" }) })
    const c = def({ schedule: Schedule.cron("0 9 * * 1-5", { timeZone: "UTC" }) })
    expect(Declared.decide(b, live(a))).toEqual({ _tag: "unchanged" })
    expect(Declared.decide(c, live(a))).toEqual({ _tag: "update", fields: ["schedule"] })
  })

  it("SPEC §18.1: each changed option is named, in a fixed order, and nothing else", () => {
    const v1 = def({ schedule: Schedule.fixedRate(60_000), tags: ["a", "b"] }, 0, { handler: "h" })
    const v2 = def(
      {
        schedule: Schedule.fixedRate(30_000),
        priority: "high",
        retry: { maxRetries: 3 },
        missedRuns: "skip",
        pauseAfterConsecutiveFailures: 2,
        window: 1_000,
        tags: ["b", "a"],
        breaker: "smtp",
      },
      0,
      { handler: "h", payload: '{"n":2}' },
    )
    expect(Declared.decide(v2, live(v1))).toEqual({
      _tag: "update",
      fields: [
        "schedule",
        "priority",
        "retry",
        "missedRuns",
        "pauseAfterConsecutiveFailures",
        "window",
        "breaker",
        "payload",
      ],
    })
  })

  it("changesOf: the declared values, and the removal of what the declaration leaves out", () => {
    const options = { id: "x", schedule: Schedule.fixedRate(10), priority: "high" }
    expect(
      Declared.changesOf(options, ["schedule", "priority", "window", "breaker", "tags"]),
    ).toEqual({
      schedule: options.schedule,
      priority: "high",
      window: null,
      breaker: null,
      tags: [],
    })
  })

  it("changeOf: an update records the fields given, an ensure the fields decided (SPEC §18.1)", () => {
    expect(
      Declared.changeOf({ update: { tags: ["a"], priority: "high", window: undefined } }),
    ).toEqual({ cause: "update", fields: ["tags", "priority"] })
    // `null` is a value given (it removes the option), `undefined` is not.
    expect(Declared.changeOf({ update: { window: null } })).toEqual({
      cause: "update",
      fields: ["window"],
    })
    expect(Declared.changeOf({ ensure: ["schedule", "payload"] })).toEqual({
      cause: "ensure",
      fields: ["schedule", "payload"],
    })
  })

  it("definitionOf: a bad declaration is the rules' typed error naming the field", () => {
    const bad = Declared.definitionOf(
      { schedule: Schedule.fixedRate(10), priority: "urgent" as never },
      0,
    )
    expect(bad).toBeInstanceOf(Errors.InvalidPriority)
    expect((bad as Errors.InvalidPriority).field).toBe("priority")
  })

  it("checkBatch: a missing or repeated id, or a bad set name, is named with its value", () => {
    expect(Declared.checkBatch(["a", "b"], "app")).toBeUndefined()
    const twice = Declared.checkBatch(["a", "b", "a"], undefined)
    expect(twice).toMatchObject({ field: "tasks[2].id", value: "a" })
    expect(Declared.checkBatch(["a", undefined], undefined)).toMatchObject({
      field: "tasks[1].id",
      value: undefined,
    })
    expect(Declared.checkBatch([], "")).toMatchObject({ field: "set", value: "" })
  })

  it("tagsOf and undeclared: a set is a tag; its members not declared are cancelled", () => {
    expect(Declared.tagsOf(["x"], "app")).toEqual(["x", "app"])
    expect(Declared.tagsOf(["app"], "app")).toEqual(["app"])
    expect(Declared.tagsOf(undefined, undefined)).toBeUndefined()
    expect(Declared.undeclared(["a", "b", "c"], ["b"])).toEqual(["a", "c"])
  })
})

describe("getters", () => {
  it("Kernel.definition: a task scheduled with a declaration is unchanged against it", () => {
    const k = new Kernel.Kernel<string>()
    const options = {
      id: "t",
      job: "j",
      schedule: Schedule.cron("*/5 * * * *"),
      retry: { maxRetries: 2 },
      tags: ["x"],
      window: 60_000,
    }
    expect(k.schedule(options, 0)).toBe("t")
    const { job, id: _id, ...rest } = options
    const declared = def(rest, 1_000_000, { job })
    expect(Declared.decide(declared, k.definition("t", 1_000_000))).toEqual({ _tag: "unchanged" })
    // After an update, the updated options are the task's definition.
    expect(k.update("t", { schedule: Schedule.fixedRate(1000) }, 1)).toBe(true)
    const changed = def({ ...rest, schedule: Schedule.fixedRate(1000) }, 2, { job })
    expect(Declared.decide(changed, k.definition("t", 2))).toEqual({ _tag: "unchanged" })
    expect(k.definition("nope", 0)).toBeUndefined()
  })
})

describe("decide: what counts as a change (SPEC §18.1)", () => {
  const rate = def({ schedule: Schedule.fixedRate(60_000) })
  const update = (...fields: Array<string>) => ({ _tag: "update", fields })

  it("SPEC §18.1: a schedule of another kind is a change, whatever its period", () => {
    const delay = def({ schedule: Schedule.fixedDelay(60_000) })
    const cron = def({ schedule: Schedule.cron("* * * * *") })
    const next = () => 0
    const custom = def({ schedule: Schedule.custom(next) })
    const oneShot = def({ schedule: Schedule.at(10) })
    const kinds = [rate, delay, cron, custom, oneShot]
    for (const a of kinds) {
      for (const b of kinds) {
        expect(Declared.decide(a, live(b))).toEqual(
          a === b ? { _tag: "unchanged" } : update("schedule"),
        )
      }
    }
    expect(Declared.decide(def({ schedule: Schedule.fixedDelay(30_000) }), live(delay))).toEqual(
      update("schedule"),
    )
  })

  it("SPEC §18.1: a custom schedule is its function, an Effect Cron is its own value", () => {
    const next = () => 0
    const same = def({ schedule: Schedule.custom(next) })
    expect(Declared.decide(same, live(def({ schedule: Schedule.custom(next) })))).toEqual({
      _tag: "unchanged",
    })
    expect(Declared.decide(same, live(def({ schedule: Schedule.custom(() => 0) })))).toEqual(
      update("schedule"),
    )
    const parsed = Cron.parseUnsafe("0 9 * * *")
    const effect = def({ schedule: Schedule.cron(parsed) })
    expect(Declared.decide(effect, live(def({ schedule: Schedule.cron(parsed) })))).toEqual({
      _tag: "unchanged",
    })
    // Another Effect Cron, even parsed from the same text: its own value, not compared field by
    // field (nor by zone: both have none here).
    const reparsed = def({ schedule: Schedule.cron(Cron.parseUnsafe("0 9 * * *")) })
    expect(Declared.decide(effect, live(reparsed))).toEqual(update("schedule"))
    // An Effect Cron against the same expression given as text: not compared field by field.
    expect(Declared.decide(effect, live(def({ schedule: Schedule.cron("0 9 * * *") })))).toEqual(
      update("schedule"),
    )
    expect(Declared.decide(def({ schedule: Schedule.cron("0 9 * * *") }), live(effect))).toEqual(
      update("schedule"),
    )
  })

  it("SPEC §18.1: a one-shot given as an instant matches that instant only", () => {
    const at10 = def({ schedule: Schedule.at(10) })
    expect(Declared.decide(at10, live(def({ schedule: Schedule.at(10) })))).toEqual({
      _tag: "unchanged",
    })
    // A live one-shot, as a store gives it: its slot (a delay of 10 accepted at 0, or at 5).
    const oneShotAt = (slot: number) => ({ ...def({ schedule: Schedule.once(10) }), at: slot })
    expect(Declared.decide(at10, live(oneShotAt(10)))).toEqual({ _tag: "unchanged" })
    expect(Declared.decide(at10, live(oneShotAt(15)))).toEqual(update("schedule"))
    // A declared delay matches the live one-shot whatever its slot.
    expect(Declared.decide(def({ schedule: Schedule.once(10) }), live(oneShotAt(15)))).toEqual({
      _tag: "unchanged",
    })
    // A one-shot is never a recurring schedule, whichever side it is on.
    expect(Declared.decide(def({ schedule: Schedule.once(10) }), live(rate))).toEqual(
      update("schedule"),
    )
    expect(Declared.decide(rate, live(def({ schedule: Schedule.once(10) })))).toEqual(
      update("schedule"),
    )
    expect(at10.at).toBe(10)
    expect(def({ schedule: Schedule.once(10) }).at).toBeUndefined()
    expect(rate.at).toBeUndefined()
  })

  it("SPEC §18.1: a store's options are compared as plain data, by value", () => {
    const more = (value: unknown) => def({ schedule: Schedule.fixedRate(60_000) }, 0, { value })
    const compare = (a: unknown, b: unknown) => Declared.decide(more(a), live(more(b)))
    const same = [
      [
        [1, [2, "x"]],
        [1, [2, "x"]],
      ],
      [new Set(["a", "b"]), new Set(["b", "a"])],
      [
        { a: 1, b: { c: [2] } },
        { b: { c: [2] }, a: 1 },
      ],
      [Object.assign(Object.create(null), { a: 1 }), Object.assign(Object.create(null), { a: 1 })],
      [Number.NaN, Number.NaN],
      [null, null],
    ]
    for (const [a, b] of same) expect(compare(a, b)).toEqual({ _tag: "unchanged" })
    class Box {
      readonly a: number
      constructor(a: number) {
        this.a = a
      }
    }
    const different = [
      [
        [1, 2],
        [1, 3],
      ],
      [[1], [1, 2]],
      [[1, 2], [1]],
      [[1], { 0: 1 }],
      [{ 0: 1, length: 1 }, [1]],
      [new Set(["a"]), new Set(["a", "b"])],
      [new Set(["a", "b"]), new Set(["a", "c"])],
      [new Set(["a"]), ["a"]],
      [{ a: 1 }, { b: 1 }],
      [{ a: undefined }, { b: undefined }],
      [{ a: 1 }, { a: 1, b: 2 }],
      [{ a: 1 }, { a: 2 }],
      [{ a: 1 }, new Box(1)],
      [new Box(1), { a: 1 }],
      [new Box(1), new Box(1)],
      [{}, null],
      [null, {}],
      [{ a: 1 }, "x"],
      ["1", 1],
    ]
    for (const [a, b] of different) expect(compare(a, b)).toEqual(update("value"))
  })

  it("SPEC §18.1: an option only one side has is a change, named in the order of its name", () => {
    const a = def({ schedule: Schedule.fixedRate(60_000) }, 0, { b: 1, a: 1 })
    const b = def({ schedule: Schedule.fixedRate(60_000) }, 0, { c: 1 })
    expect(Declared.decide(a, live(b))).toEqual(update("a", "b", "c"))
    expect(Declared.decide(b, live(a))).toEqual(update("a", "b", "c"))
  })

  it("SPEC §18.1: tags are a set: another tag, or one more, is a change", () => {
    const tags = (...t: Array<string>) => def({ schedule: Schedule.fixedRate(60_000), tags: t })
    expect(Declared.decide(tags("a", "b"), live(tags("b", "a")))).toEqual({ _tag: "unchanged" })
    expect(Declared.decide(tags("a", "b"), live(tags("a", "c")))).toEqual(update("tags"))
    expect(Declared.decide(tags("a"), live(tags("a", "b")))).toEqual(update("tags"))
    expect(Declared.decide(tags("a", "b"), live(tags("a")))).toEqual(update("tags"))
  })

  it("SPEC §18.1: a retry policy and a breaker policy are compared by value", () => {
    const opts = (retry: number, breaker: string | undefined) =>
      def({
        schedule: Schedule.fixedRate(60_000),
        retry: { maxRetries: retry },
        ...(breaker === undefined ? {} : { breaker }),
      })
    expect(Declared.decide(opts(2, "smtp"), live(opts(2, "smtp")))).toEqual({ _tag: "unchanged" })
    expect(Declared.decide(opts(2, "smtp"), live(opts(3, "smtp")))).toEqual(update("retry"))
    expect(Declared.decide(opts(2, undefined), live(opts(2, "smtp")))).toEqual(update("breaker"))
  })
})

describe("the options a declaration leaves out, and its batch (SPEC §18.1, §18.2, §18.3)", () => {
  it("SPEC §18.1: an option left out is reset to its default on the live task", () => {
    expect(
      Declared.changesOf({ id: "x" }, [
        "priority",
        "retry",
        "missedRuns",
        "pauseAfterConsecutiveFailures",
        "payload",
      ]),
    ).toEqual({
      priority: "normal",
      retry: { maxRetries: 0 },
      missedRuns: "catch-up",
      pauseAfterConsecutiveFailures: 0,
      payload: undefined,
    })
    expect(Declared.changesOf({ window: 5, tags: ["a"] }, ["window", "tags"])).toEqual({
      window: 5,
      tags: ["a"],
    })
  })

  it("SPEC §18.2: a set name must be a string of 1 to 64 characters; an id a non-empty string", () => {
    expect(Declared.checkBatch(["a"], "s".repeat(64))).toBeUndefined()
    expect(Declared.checkBatch(["a"], undefined)).toBeUndefined()
    for (const set of ["s".repeat(65), 7, null]) {
      const e = Declared.checkBatch(["a"], set)
      expect(e).toBeInstanceOf(Errors.InvalidOption)
      expect(e).toMatchObject({ field: "set", value: set })
      expect(e?.message).toContain("1 to 64 characters")
    }
    for (const id of ["", 7]) {
      const e = Declared.checkBatch(["a", id], undefined)
      expect(e).toMatchObject({ field: "tasks[1].id", value: id })
      expect(e?.message).toContain("must be a non-empty string")
    }
    expect(Declared.checkBatch(["a", "a"], undefined)?.message).toBe(
      'tasks[1].id "a" is declared twice in one batch',
    )
  })

  it("SPEC §18.3: a task with no tags of its own gets the set's tag; without a set, its own", () => {
    expect(Declared.tagsOf(undefined, "app")).toEqual(["app"])
    expect(Declared.tagsOf(["x"], undefined)).toEqual(["x"])
    expect(Declared.undeclared(["a", "b"], [])).toEqual(["a", "b"])
  })
})

describe("decide: an object on one side only (SPEC §18.1)", () => {
  const rate = (more: Record<string, unknown> = {}, breaker?: Breaker.Resolved) =>
    def(
      {
        schedule: Schedule.fixedRate(60_000),
        ...(breaker === undefined ? {} : { breaker }),
      },
      0,
      more,
    )
  const update = (...fields: Array<string>) => ({ _tag: "update", fields })

  it("SPEC §18.1: a task's own breaker policy added or dropped is a change of `breaker`", () => {
    const policy = Breaker.resolve({ failures: 3, coolDown: 1_000 })
    if (!("failures" in policy)) throw new Error(policy.message)
    expect(Declared.decide(rate({}, policy), live(rate()))).toEqual(update("breaker"))
    expect(Declared.decide(rate(), live(rate({}, policy)))).toEqual(update("breaker"))
    expect(Declared.decide(rate({}, policy), live(rate({}, { ...policy })))).toEqual({
      _tag: "unchanged",
    })
  })

  it("SPEC §18.1: a store option holding an object, declared or live only, is a change", () => {
    const payload = { to: "ops@example.com", retries: [1, 2] }
    expect(Declared.decide(rate({ payload }), live(rate()))).toEqual(update("payload"))
    expect(Declared.decide(rate(), live(rate({ payload })))).toEqual(update("payload"))
    expect(Declared.decide(rate({ payload: undefined }), live(rate({ payload })))).toEqual(
      update("payload"),
    )
  })
})
