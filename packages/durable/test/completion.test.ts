/**
 * A finished run's change on its own (`src/internal/completion.ts`): a run handed back (no
 * outcome, or cut off by closing) and a run settled by the rules, each with the event recorded
 * instead when its claim was lost (SPEC §5.5, §6).
 */
import { describe, expect, it } from "@effect/vitest"
import { Task } from "@tickwork/core"
import { Effect, Fiber, Logger, Queue } from "effect"
import * as Completion from "../src/internal/completion.ts"
import { counters, type Env, type Finished } from "../src/internal/env.ts"
import type { Held } from "../src/internal/held.ts"
import type {
  Change,
  ChangeResult,
  Committed,
  EventEntry,
  RunEntry,
  TaskRow,
} from "../src/internal/model.ts"
import * as Rows from "../src/internal/rows.ts"
import * as Settle from "../src/internal/settle.ts"
import { claimed } from "./rowFixtures.ts"

const held = (fields: Partial<Held> = {}, row = claimed()): Held => ({
  key: `${row.id}@${row.fence}`,
  row,
  runNumber: 5,
  started: true,
  startedAt: 1_010,
  finished: true,
  lost: false,
  releasing: false,
  renewedAt: 0,
  finishedAt: 0,
  overdue: false,
  ...fields,
})

/** A process `p1` at 2_000 whose pushes count from 40 and whose jitter draws 0.25. */
const envOf = () => {
  let seq = 39
  return {
    owner: "p1",
    now: () => 2_000,
    nextSeq: () => ++seq,
    options: { windowMs: 60_000 },
    random: { next: () => 0.25 },
  } as unknown as Env
}

const finished = (h: Held, outcome: Task.Outcome | undefined): Finished => ({
  held: h,
  outcome,
  startedAt: 1_010,
  finishedAt: 1_500,
})

describe("a run handed back (SPEC §5.5)", () => {
  it("due again at its run_at, recorded as released, or as fenced out if its claim was lost", () => {
    const h = held()
    const change = Completion.handBack(envOf(), h, 1_800)
    expect(change.id).toBe("t")
    expect(change.fence).toBe(7)
    expect(change.update).toStrictEqual(Rows.handBack(h.row, 1_800, true))
    expect(change.events).toHaveLength(1)
    expect(change.events[0]).toMatchObject({
      kind: "released",
      cause: "interrupted",
      detail: "attempt 2, delivery 3",
      owner: "p1",
      at: 1_800,
      fence: 7,
    })
    expect(change.fencedOut).toMatchObject({
      kind: "fenced-out",
      detail: "release after the lease was lost",
      owner: "p1",
      at: 1_800,
    })
  })

  it("one that never started is not a delivery", () => {
    const h = held({ started: false })
    const change = Completion.handBack(envOf(), h, 1_800)
    expect(change.update.deliveries).toBe(2)
    expect(change.events[0]?.cause).toBe("not started")
  })

  it("is decided again on the row the commit finds: a pause asked for since is kept", () => {
    const h = held()
    const change = Completion.handBack(envOf(), h, 1_800)
    const fresh = claimed({ pausedReason: "manual" })
    const again = change.redecide?.(fresh, undefined)
    expect(again?.update).toStrictEqual(Rows.handBack(fresh, 1_800, true))
    expect(again?.update).toMatchObject({ state: "paused", pausedReason: "manual" })
    expect(again?.events).toBe(change.events)
  })
})

describe("a finished run's change (load row → Rules.settle → store row)", () => {
  it("no outcome: handed back now", () => {
    const { change, ran } = Completion.toChange(envOf(), finished(held(), undefined))
    expect(ran).toBeUndefined()
    expect(change.update).toStrictEqual(Rows.handBack(claimed(), 2_000, true))
    expect(change.events[0]?.at).toBe(2_000)
  })

  it("interrupted while closing: handed back when it ended", () => {
    const h = held({ releasing: true })
    const { change, ran } = Completion.toChange(envOf(), finished(h, { kind: "interrupted" }))
    expect(ran).toBeUndefined()
    expect(change.update).toStrictEqual(Rows.handBack(h.row, 1_500, true))
    // Interrupted while not closing, it is an outcome the rules settle.
    const settled = Completion.toChange(envOf(), finished(held(), { kind: "interrupted" }))
    expect(settled.ran).toMatchObject({ kind: "ran", outcome: "interrupted" })
    // Closing but ended with an outcome of its own: settled too.
    const done = Completion.toChange(envOf(), finished(h, Task.succeeded))
    expect(done.ran).toMatchObject({ kind: "ran", outcome: "succeeded" })
  })

  it("settled as settle.ts decides, with what the commit needs to decide again", () => {
    const h = held()
    const { change, ran, continuation } = Completion.toChange(
      envOf(),
      finished(h, Task.failed("smtp down")),
    )
    const draws: Array<number> = []
    const again = {
      outcome: Task.failed("smtp down"),
      startedAt: 1_010,
      finishedAt: 1_500,
      runNumber: 5,
      seq: 40,
      windowMs: 60_000,
      owner: "p1",
      draws,
    }
    const decided = Settle.decide(
      h.row,
      again,
      Settle.recording({ next: () => 0.25 }, draws),
      undefined,
    )
    expect(change).toStrictEqual({
      id: "t",
      fence: 7,
      revision: 11,
      update: decided.update,
      run: decided.run,
      events: decided.events,
      again,
      fencedOut: change.fencedOut,
    })
    // The jitter drawn is kept for the commit to replay.
    expect(change.again?.draws).toEqual([0.25])
    expect(ran).toStrictEqual({ kind: "ran", ...decided.run })
    expect(continuation).toBe("retry")
    expect(change.fencedOut).toMatchObject({
      kind: "fenced-out",
      detail: "attempt 2, delivery 3, outcome failed",
      at: 1_500,
      owner: "p1",
    })
  })

  it("says when the lease was lost; a final run's continuation is final", () => {
    const last = held({ lost: true }, claimed({ plan: undefined, attempt: 1 }))
    const { change, continuation } = Completion.toChange(envOf(), finished(last, Task.succeeded))
    expect(change.fencedOut.detail).toBe("attempt 1, delivery 3, outcome succeeded (lease lost)")
    expect(continuation).toBe("final")
  })
})

describe("the completer: a batch of finished runs, committed and reported", () => {
  interface Seen {
    readonly published: Array<string>
    readonly forgotten: Array<string>
    readonly retried: Array<string>
    notified: number
    wakes: number
    readonly batches: Array<ReadonlyArray<string>>
  }

  /**
   * A process whose commit answers `answer` for each batch (by change, in order), its store
   * notifying others when `signal`, its options `pollMs` and `limits`.
   */
  const completerEnv = (
    answer: (changes: ReadonlyArray<Change>) => Committed,
    options: { signal?: boolean; pollMs?: number; limits?: unknown } = {},
  ) =>
    Effect.gen(function* () {
      const finished = yield* Queue.unbounded<Finished>()
      const seen: Seen = {
        published: [],
        forgotten: [],
        retried: [],
        notified: 0,
        wakes: 0,
        batches: [],
      }
      const c = counters()
      const contexts: Array<unknown> = []
      const env = {
        ...(envOf() as object),
        finished,
        counters: c,
        held: { forget: (h: Held) => seen.forgotten.push(h.row.id) },
        outage: {
          commit: (changes: ReadonlyArray<Change>, context: unknown) =>
            Effect.sync(() => {
              contexts.push(context)
              seen.batches.push(changes.map((x) => x.id))
              return answer(changes)
            }),
        },
        publish: (e: EventEntry | RunEntry, handler?: string) =>
          seen.published.push(
            [
              "kind" in e ? e.kind : "event",
              e.taskId,
              "state" in e ? e.state : undefined,
              handler ?? "-",
            ]
              .filter((part) => part !== undefined)
              .join(" "),
          ),
        runSeries: (handler: string) => ({ retried: () => seen.retried.push(handler) }),
        wakeup: { wake: () => seen.wakes++ },
        store: {
          signal: options.signal
            ? {
                notify: Effect.sync(() => {
                  seen.notified++
                }),
              }
            : undefined,
        },
        options: {
          windowMs: 60_000,
          pollMs: options.pollMs ?? 1_000,
          limits: options.limits,
        },
      } as unknown as Env
      return { env, finished, seen, c, contexts }
    })

  /** Runs the completer until `n` runs are let go, then stops it. */
  const complete = (env: Env, seen: Seen, n: number) =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(Completion.completer(env))
      for (let k = 0; k < 10_000 && seen.forgotten.length < n; k++) yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      expect(seen.forgotten).toHaveLength(n)
    })

  const row = (id: string, fields: Partial<TaskRow> = {}) =>
    claimed({ id, handler: `h-${id}`, ...fields })
  const done = (id: string, outcome: Task.Outcome | undefined, fields: Partial<TaskRow> = {}) =>
    finished(held({}, row(id, fields)), outcome)

  it.effect(
    "reports each run as its commit went: completed, fenced out, handed back, cancelled",
    () =>
      Effect.gen(function* () {
        const results: Array<ChangeResult> = [
          "applied",
          "fenced-out",
          "applied",
          "cancelled",
          "held",
        ]
        const breakerEvent = { kind: "breaker", taskId: "x" } as unknown as EventEntry
        const {
          env,
          finished: queue,
          seen,
          c,
          contexts,
        } = yield* completerEnv(() => ({
          results,
          decided: [],
          events: [breakerEvent],
        }))
        yield* Queue.offerAll(queue, [
          done("a", Task.failed("smtp down")),
          done("b", Task.succeeded),
          done("c", undefined),
          // Would be retried, but its task was cancelled while it ran: no retry counted.
          done("d", Task.failed("smtp down")),
          done("e", Task.failed("smtp down")),
        ])
        yield* complete(env, seen, 5)
        expect(seen.batches).toEqual([["a", "b", "c", "d", "e"]])
        // The commit decides again with this process's push order, name and jitter.
        expect(contexts).toEqual([{ seq: env.nextSeq, owner: "p1", random: env.random }])
        expect(seen.published).toEqual([
          "ran a scheduled h-a",
          "fenced-out b h-b",
          "released c h-c",
          "ran d cancelled h-d",
          "ran e scheduled h-e",
          "breaker x -",
        ])
        expect(seen.forgotten).toEqual(["a", "b", "c", "d", "e"])
        // Retries counted for the applied and held ones only, by handler.
        expect(seen.retried).toEqual(["h-a", "h-e"])
        expect([c.completed, c.fencedOut, c.released]).toEqual([3, 1, 1])
        expect(seen.wakes).toBe(1)
        // No signal on this store: nothing to notify.
        expect(seen.notified).toBe(0)
      }),
  )

  it.effect("the record says what the commit decided again, with its events", () =>
    Effect.gen(function* () {
      const redecided = Settle.decide(
        claimed({ id: "a", pausedReason: "manual" }),
        {
          outcome: Task.failed("smtp down"),
          startedAt: 1_010,
          finishedAt: 1_500,
          runNumber: 5,
          seq: 40,
          windowMs: 60_000,
          owner: "p1",
          draws: [0.25],
        },
        { next: () => 0.25 },
        undefined,
      )
      const missed = { kind: "skipped", taskId: "a" } as unknown as EventEntry
      const {
        env,
        finished: queue,
        seen,
      } = yield* completerEnv(() => ({
        results: ["applied"],
        decided: [{ ...redecided, continuation: "final", events: [missed] }],
        events: [],
      }))
      yield* Queue.offer(queue, done("a", Task.failed("smtp down")))
      yield* complete(env, seen, 1)
      expect(seen.published).toEqual(["ran a paused h-a", "skipped a h-a"])
      // The decision made again ends the task's retries: none counted.
      expect(seen.retried).toEqual([])
    }),
  )

  it.effect("a row that cannot be read back ends failed, not handed back", () =>
    Effect.gen(function* () {
      const {
        env,
        finished: queue,
        seen,
        c,
      } = yield* completerEnv((changes) => {
        expect(changes[0]?.update).toMatchObject({ state: "failed" })
        expect(changes[0]?.update.lastError).toMatch(/^the stored task cannot be completed: /)
        expect(changes[0]?.fencedOut.detail).toBe("failed unreadable task")
        return { results: ["applied"], decided: [], events: [] }
      })
      yield* Queue.offer(queue, done("u", Task.succeeded, { retry: undefined as never }))
      yield* complete(env, seen, 1)
      expect(seen.published).toEqual([])
      expect([c.completed, c.released]).toEqual([0, 0])
    }),
  )

  it.effect("tells other processes of work due within a poll, and of room under flow control", () =>
    Effect.gen(function* () {
      const batch = (
        items: ReadonlyArray<Finished>,
        results: Array<ChangeResult>,
        options: { pollMs?: number; limits?: unknown },
      ) =>
        Effect.gen(function* () {
          const s = yield* completerEnv(() => ({ results, decided: [], events: [] }), {
            signal: true,
            ...options,
          })
          yield* Queue.offerAll(s.finished, items)
          yield* complete(s.env, s.seen, items.length)
          return s.seen.notified
        })
      // A retry due at 1_600 (now 2_000): due within a poll.
      const retry = () => done("a", Task.failed("x"))
      expect(yield* batch([retry()], ["applied"], {})).toBe(1)
      // Fenced out or cancelled: nothing of it is due.
      expect(yield* batch([retry()], ["fenced-out"], {})).toBe(0)
      expect(yield* batch([retry()], ["cancelled"], {})).toBe(0)
      // Due after the next poll (slot 3_000, now 2_000, a poll of 500 ms): not yet.
      const next = () => done("b", Task.succeeded, { attempt: 1, slot: 2_000, runAt: 2_000 })
      expect(yield* batch([next()], ["applied"], { pollMs: 500 })).toBe(0)
      expect(yield* batch([next()], ["applied"], { pollMs: 1_000 })).toBe(1)
      // One of two due is enough; a run that ended its task is not due.
      const last = () => done("l", Task.succeeded, { plan: undefined })
      expect(yield* batch([next(), retry()], ["applied", "applied"], { pollMs: 500 })).toBe(1)
      expect(yield* batch([last()], ["applied"], { pollMs: 5_000 })).toBe(0)
      // No polling at all: nothing to hurry.
      expect(yield* batch([retry()], ["applied"], { pollMs: Number.POSITIVE_INFINITY })).toBe(0)
      // Under flow control a run that ended frees its scope, whenever it is due next.
      const limits = { groups: new Map([["g", {}]]), keys: undefined }
      expect(yield* batch([next()], ["applied"], { pollMs: 500, limits })).toBe(1)
      expect(yield* batch([next()], ["fenced-out"], { pollMs: 500, limits })).toBe(0)
      expect(
        yield* batch([next(), next()], ["fenced-out", "applied"], { pollMs: 500, limits }),
      ).toBe(1)
      expect(
        yield* batch([next()], ["applied"], {
          pollMs: 500,
          limits: { groups: new Map(), keys: undefined },
        }),
      ).toBe(0)
    }),
  )

  it.effect("a batch that fails is logged, and the next one is completed", () => {
    const warnings: Array<string> = []
    const logger = Logger.make((o) => {
      if (o.logLevel !== "Warn") return
      const parts = Array.isArray(o.message) ? o.message : [o.message]
      warnings.push(String(parts[0]))
    })
    return Effect.gen(function* () {
      let first = true
      const {
        env,
        finished: queue,
        seen,
      } = yield* completerEnv(() => {
        if (first) {
          first = false
          throw new Error("bug")
        }
        return { results: ["applied"], decided: [], events: [] }
      })
      const fiber = yield* Effect.forkChild(Completion.completer(env))
      yield* Queue.offer(queue, done("a", Task.succeeded))
      for (let k = 0; k < 10_000 && warnings.length === 0; k++) yield* Effect.yieldNow
      expect(warnings).toEqual(["tickwork durable: completing runs failed"])
      yield* Queue.offer(queue, done("b", Task.succeeded))
      for (let k = 0; k < 10_000 && seen.forgotten.length === 0; k++) yield* Effect.yieldNow
      for (let k = 0; k < 100; k++) yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      expect(seen.forgotten).toEqual(["b"])
      // A batch that went well, and the completer's own interruption, are not warned of.
      expect(warnings).toEqual(["tickwork durable: completing runs failed"])
    }).pipe(Effect.provide(Logger.layer([logger])))
  })
})
