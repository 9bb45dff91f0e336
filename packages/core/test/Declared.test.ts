/**
 * Declared tasks (SPEC §18): the decision `ensure` makes for one declared task, pure, with
 * explicit `now`.
 */
import { describe, expect, it } from "vitest"
import { Declared, Errors, Kernel, Schedule } from "../src/index.ts"

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
