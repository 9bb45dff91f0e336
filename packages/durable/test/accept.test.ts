/**
 * Accepting a durable task on its own (`src/internal/accept.ts`): each bad option's typed error
 * (naming the field and the value), and the row an accepted task becomes.
 */
import { Breaker, Errors, Rules, Schedule } from "@tickwork/core"
import { Cron, Effect, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Handler } from "../src/index.ts"
import * as Accept from "../src/internal/accept.ts"

const mail = Handler.make("mail", Schema.Struct({ to: Schema.String }), () => Effect.void)
const sms = Handler.make("sms", Schema.Struct({}), () => Effect.void)
const handlers = new Map<string, Handler.Any>([
  ["mail", mail],
  ["sms", sms],
])
const smtp = Breaker.resolve({ failures: 2, coolDown: 100 }) as Breaker.Resolved
const shared = new Map([["smtp", smtp]])

/** `o` prepared at 500 with push order 7. */
const prepare = (
  o: unknown,
  registered: ReadonlyMap<string, Handler.Any> = handlers,
  limits?: Rules.ResolvedLimits,
) => {
  let pushes = 0
  const row = Accept.prepare(
    o as Accept.TaskOptions,
    500,
    registered,
    () => {
      pushes++
      return 7
    },
    shared,
    limits,
  )
  return { row, pushes }
}

const task = (fields: Record<string, unknown> = {}) => ({
  id: "t1",
  handler: "mail",
  payload: { to: "a@b" },
  schedule: Schedule.fixedRate(1_000),
  ...fields,
})

/** The error `o` is refused with: its tag, field and value (nothing pushed). */
const refusal = (o: unknown, limits?: Rules.ResolvedLimits) => {
  const { row, pushes } = prepare(o, handlers, limits)
  expect(pushes).toBe(0)
  expect(row).toBeInstanceOf(Error)
  const e = row as unknown as { _tag: string; field: string; value: unknown; message: string }
  return { tag: e._tag, field: e.field, value: e.value, message: e.message }
}

describe("a durable task's options refused", () => {
  it("options that are not an object", () => {
    expect(refusal(null)).toMatchObject({ tag: "InvalidOption", field: "options", value: null })
    expect(refusal("x")).toMatchObject({ tag: "InvalidOption", field: "options", value: "x" })
  })

  it("an unknown option, named", () => {
    expect(refusal(task({ job: () => {} }))).toMatchObject({ field: "job" })
    expect(refusal(task({ colour: 1 }))).toMatchObject({ field: "colour", value: 1 })
  })

  it("a handler not registered, by name or by value, listing the registered ones", () => {
    expect(refusal(task({ handler: "fax" }))).toStrictEqual({
      tag: "UnknownHandler",
      field: "handler",
      value: "fax",
      message: 'handler "fax" is not registered with this scheduler (registered: "mail", "sms")',
    })
    const fax = Handler.make("fax", Schema.Struct({}), () => Effect.void)
    expect(refusal(task({ handler: fax }))).toMatchObject({ tag: "UnknownHandler", value: "fax" })
    expect(refusal(task({ handler: 5 }))).toMatchObject({ field: "handler", value: 5 })
    expect(refusal(task({ handler: { name: 5 } }))).toMatchObject({
      field: "handler",
      value: 5,
    })
    expect(refusal(task({ handler: undefined }))).toMatchObject({ value: undefined })
    const { row } = prepare(task(), new Map())
    expect((row as Error).message).toBe(
      'handler "mail" is not registered with this scheduler (registered: none)',
    )
  })

  it("a custom schedule, which cannot be stored", () => {
    const custom = Schedule.custom(() => undefined)
    expect(refusal(task({ schedule: custom }))).toStrictEqual({
      tag: "NotDurable",
      field: "schedule",
      value: custom,
      message: Accept.notDurable(custom).message,
    })
    expect(Accept.notDurable(custom).message).toMatch(/^schedule: a custom schedule's next\(\)/)
  })

  it("a bad id, a bad rule option, an undeclared group or key, a bad dedup", () => {
    expect(refusal(task({ id: "" }))).toMatchObject({ field: "id", value: "" })
    expect(refusal(task({ priority: "urgent" }))).toMatchObject({ field: "priority" })
    expect(refusal(task({ group: "mail" }))).toMatchObject({ field: "group", value: "mail" })
    expect(refusal(task({ key: "k" }))).toMatchObject({ field: "key", value: "k" })
    expect(refusal(task({ dedup: 3 }))).toMatchObject({ field: "dedup", value: 3 })
  })

  it("a bad timeout, a payload its schema refuses, an unknown breaker", () => {
    expect(refusal(task({ timeout: -1 }))).toMatchObject({
      tag: "InvalidOption",
      field: "timeout",
      value: -1,
    })
    expect(refusal(task({ payload: { to: 1 } }))).toMatchObject({
      tag: "InvalidPayload",
      field: "payload.to",
      value: 1,
    })
    expect(refusal(task({ breaker: "sms" }))).toMatchObject({ field: "breaker", value: "sms" })
    expect(refusal(task({ breaker: { failures: 0 } }))).toMatchObject({ tag: "InvalidOption" })
  })
})

describe("a durable task accepted", () => {
  it("is the row to insert: the rules' resolved options, its handler, payload and schedule", () => {
    const o = task({ priority: "high", tags: ["x"], timeout: "2 seconds" })
    const { row, pushes } = prepare(o)
    expect(pushes).toBe(1)
    const accepted = Rules.validate(o as never, 500, Accept.taskKeys) as Rules.Accepted
    expect(row).toStrictEqual({
      id: "t1",
      tags: ["x"],
      windowMs: null,
      breaker: undefined,
      group: undefined,
      key: undefined,
      handler: "mail",
      payload: '{"to":"a@b"}',
      seq: 7,
      schedule: Result.getOrThrow(Schedule.encode(Schedule.fixedRate(1_000), accepted)),
      priority: accepted.rank,
      retry: accepted.retry,
      missedRuns: accepted.missedRuns,
      pauseAfter: accepted.pauseAfter,
      timeoutMs: 2_000,
      slot: accepted.first,
      now: 500,
      dedup: undefined,
    })
  })

  it("by a handler value, with no timeout (0), a window, a group, a key and a dedup", () => {
    const limits: Rules.ResolvedLimits = {
      groups: new Map([["mail", { concurrency: 1 } as never]]),
      keys: { concurrency: 1 } as never,
    }
    const o = task({
      handler: sms,
      payload: {},
      window: 250,
      group: "mail",
      key: "k",
      dedup: { key: "d" },
    })
    const { row } = prepare(o, handlers, limits)
    expect(row).toMatchObject({
      handler: "sms",
      payload: "{}",
      timeoutMs: 0,
      windowMs: 250,
      group: "mail",
      key: "k",
      dedup: Rules.resolveDedup({ key: "d" }),
    })
  })

  it("with no id, a fresh UUID", () => {
    const a = prepare(task({ id: undefined })).row as { id: string }
    const b = prepare(task({ id: undefined })).row as { id: string }
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(a.id).not.toBe(b.id)
  })

  it("with a breaker: a shared one by its name's key, its own by the task's id", () => {
    expect(prepare(task({ breaker: "smtp" })).row).toMatchObject({
      breaker: { key: "shared:smtp", name: "smtp", policy: smtp },
    })
    const own = { failures: 3, coolDown: 50 }
    expect(prepare(task({ breaker: own })).row).toMatchObject({
      breaker: { key: "task:t1", name: "t1", policy: Breaker.resolve(own) },
    })
    expect(Accept.breakerOf("nope", "t1", shared)).toBeInstanceOf(Errors.InvalidOption)
  })
})

describe("a durable task's options refused, in order and in full", () => {
  it("says what is wrong with options that are not an object", () => {
    expect(refusal(null).message).toBe("options must be an object, got null")
  })

  it("an unknown option is named before a handler is looked up", () => {
    expect(refusal(task({ handler: "fax", colour: 1 }))).toMatchObject({
      tag: "InvalidOption",
      field: "colour",
    })
  })

  it("a handler given by value is named by its name", () => {
    const fax = Handler.make("fax", Schema.Struct({}), () => Effect.void)
    expect(refusal(task({ handler: fax })).message).toBe(
      'handler "fax" is not registered with this scheduler (registered: "mail", "sms")',
    )
  })

  it("a missing schedule is the rules' typed error, not a crash", () => {
    expect(refusal(task({ schedule: undefined }))).toMatchObject({ field: "schedule" })
  })

  it("a cron schedule given as a parsed Cron object has no stored form", () => {
    const parsed = Schedule.cron(Cron.parseUnsafe("0 * * * *"))
    const e = refusal(task({ schedule: parsed }))
    expect(e).toMatchObject({ tag: "NotDurable", field: "schedule", value: parsed })
    expect(e.message).toContain("a parsed Cron object cannot be stored")
  })
})
