/**
 * Run traces: every occurrence a scheduler records (runs, retries, coalesced and skipped slots,
 * cancellations) as one compact line each, collected from the service's `occurrences` stream,
 * with helpers to assert on them.
 *
 * A line reads `<time> <task> <kind> …`:
 *
 * ```text
 * 10 pay retried slot=10 start=10 attempt=1 run=1 failed -> scheduled@15
 * 15 pay ran slot=10 due=15 start=15 attempt=2 run=2 succeeded -> done
 * 35 report ran slot=0 start=0 attempt=1 run=1 succeeded -> done
 * 35 poll ran slot=0 start=35 attempt=1 run=1 succeeded -> scheduled@40
 * 35 poll skipped 10..30 count=3 cause=late next=40
 * 45 reminder cancelled from=scheduled slot=100
 * 50 export cancelled from=running slot=50 interrupted
 * 50 export ran slot=50 start=50 attempt=1 run=1 interrupted -> cancelled
 * ```
 *
 * **Example** (Recording a task's runs)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule, Scheduler } from "@tickwork/runtime"
 * import { TestScheduler, Trace } from "@tickwork/runtime/testing"
 *
 * const program = Effect.gen(function* () {
 *   const trace = yield* Trace.record()
 *   const scheduler = yield* Scheduler.Scheduler
 *   yield* scheduler.schedule({ id: "tick", schedule: Schedule.fixedRate(100), job: Effect.void })
 *   yield* TestScheduler.advance(150)
 *   yield* trace.expectLines([
 *     "0 tick ran slot=0 start=0 attempt=1 run=1 succeeded -> scheduled@100",
 *     "100 tick ran slot=100 start=100 attempt=1 run=2 succeeded -> scheduled@200",
 *   ])
 * })
 * TestScheduler.run(program)
 * ```
 *
 * @since 0.1.0
 */
import { Data, Effect, type Scope, Stream } from "effect"
import type * as Ledger from "../Ledger.ts"
import * as Scheduler from "../Scheduler.ts"

/**
 * How times are written in a line: epoch ms (`"ms"`, default: short under a clock that starts at
 * 0) or ISO-8601 (`"iso"`, readable for cron tasks in real dates).
 *
 * @category models
 * @since 0.1.0
 */
export type TimeFormat = "ms" | "iso"

/**
 * Options of {@link line} and {@link record}.
 *
 * @category models
 * @since 0.1.0
 */
export interface LineOptions {
  readonly time?: TimeFormat
}

const timeOf = (ms: number | undefined, format: TimeFormat | undefined): string =>
  ms === undefined ? "none" : format === "iso" ? new Date(ms).toISOString() : String(ms)

/**
 * One occurrence as a line. Two occurrences with the same line are the same event of the same
 * task: the line has every field but the error values and the task's generation.
 *
 * - `ran` / `retried`: `<finishedAt> <id> ran|retried slot=<slot>[ due=<scheduledFor>]
 *   start=<startedAt> attempt=<n> run=<n> <outcome> -> <state>[@<nextSlot>]`: `slot` is the
 *   run's grid slot; `due`, written only when it differs, is when the run was due (a retry's
 *   `failedAt + backoff`); `@<nextSlot>` is when the task is due next
 * - `coalesced` / `skipped`: `<at> <id> coalesced|skipped <first>..<last> count=<n>[+]
 *   cause=<cause> next=<slot|none>` (`+`: a long cron range, counted up to a bound)
 * - `cancelled`: `<at> <id> cancelled from=<state> slot=<slot>[ interrupted]`
 *
 * **Example** (Formatting a ledger record)
 *
 * ```ts
 * import { Trace } from "@tickwork/runtime/testing"
 *
 * Trace.line({ kind: "cancelled", id: "a" as never, generation: 1, from: "scheduled", scheduledFor: 50, interrupted: false, at: 20 })
 * // "20 a cancelled from=scheduled slot=50"
 * ```
 *
 * @category formatting
 * @since 0.1.0
 */
export const line = (occurrence: Ledger.Occurrence, options: LineOptions = {}): string => {
  const t = (ms: number | undefined) => timeOf(ms, options.time)
  switch (occurrence.kind) {
    case "ran":
    case "retried": {
      const o = occurrence
      const next = o.nextSlot === undefined ? "" : `@${t(o.nextSlot)}`
      // `slot=` is the grid slot, as the ledger files the run; a retry keeps its slot and is due
      // later (`failedAt + backoff`), so its due time is written apart, only when it differs.
      const due = o.scheduledFor === o.slot ? "" : ` due=${t(o.scheduledFor)}`
      return (
        `${t(o.finishedAt)} ${o.id} ${o.kind} slot=${t(o.slot)}${due} start=${t(o.startedAt)} ` +
        `attempt=${o.attempt} run=${o.runNumber} ${o.outcome.kind} -> ${o.state}${next}`
      )
    }
    case "coalesced":
    case "skipped": {
      const o = occurrence
      return (
        `${t(o.at)} ${o.id} ${o.kind} ${t(o.first)}..${t(o.last)} count=${o.count}` +
        `${o.exact ? "" : "+"} cause=${o.cause} next=${t(o.nextSlot)}`
      )
    }
    case "cancelled": {
      const o = occurrence
      return (
        `${t(o.at)} ${o.id} cancelled from=${o.from} slot=${t(o.scheduledFor)}` +
        `${o.interrupted ? " interrupted" : ""}`
      )
    }
    case "updated": {
      const o = occurrence
      return `${t(o.at)} ${o.id} updated ${o.fields.join(",")} cause=${o.cause}`
    }
    case "expired": {
      const o = occurrence
      return `${t(o.at)} ${o.id} expired slot=${t(o.slot)} deadline=${t(o.deadline)}`
    }
    case "paused": {
      const o = occurrence
      return `${t(o.at)} ${o.id} paused reason=${o.reason}`
    }
    case "resumed": {
      const o = occurrence
      return `${t(o.at)} ${o.id} resumed reason=${o.reason} next=${t(o.nextSlot)}`
    }
    case "deduplicated": {
      const o = occurrence
      return `${t(o.at)} ${o.id} ${o.result} key=${o.key} mode=${o.mode}`
    }
  }
}

/**
 * A trace did not match what a test expected. `message` shows the first difference.
 *
 * @category errors
 * @since 0.1.0
 */
export class TraceMismatch extends Data.TaggedError("TraceMismatch")<{
  readonly message: string
  readonly expected: ReadonlyArray<string>
  readonly actual: ReadonlyArray<string>
}> {}

/**
 * Compares two traces line by line; `undefined` when they are equal, otherwise a message that
 * shows the first differing line and both traces.
 *
 * **Example** (Comparing traces)
 *
 * ```ts
 * import { Trace } from "@tickwork/runtime/testing"
 *
 * Trace.diff(["0 a ran …"], ["0 a ran …"]) // undefined
 * Trace.diff(["0 a ran …"], []) // "line 1: expected "0 a ran …", got nothing …"
 * ```
 *
 * @category assertions
 * @since 0.1.0
 */
export const diff = (
  expected: ReadonlyArray<string>,
  actual: ReadonlyArray<string>,
): string | undefined => {
  const n = Math.max(expected.length, actual.length)
  for (let k = 0; k < n; k++) {
    if (expected[k] !== actual[k]) {
      const show = (s: string | undefined) => (s === undefined ? "nothing" : JSON.stringify(s))
      return (
        `line ${k + 1}: expected ${show(expected[k])}, got ${show(actual[k])}\n` +
        `expected (${expected.length} lines):\n${indent(expected)}\n` +
        `actual (${actual.length} lines):\n${indent(actual)}`
      )
    }
  }
  return undefined
}

const indent = (lines: ReadonlyArray<string>) =>
  lines.length === 0 ? "  (none)" : lines.map((l) => `  ${l}`).join("\n")

/**
 * Which occurrences a recorder query looks at: one task (`id`) or every task.
 *
 * @category models
 * @since 0.1.0
 */
export interface Filter {
  readonly id?: string
}

/**
 * A run-trace recorder: what {@link record} returns. Reads are synchronous and see every
 * occurrence published before the last `TestScheduler.advance` or `settle` returned.
 *
 * @category models
 * @since 0.1.0
 */
export interface Recorder {
  /** The occurrences recorded so far, oldest first. */
  readonly occurrences: (filter?: Filter) => ReadonlyArray<Ledger.Occurrence>
  /** The same, as lines (see {@link line}). */
  readonly lines: (filter?: Filter) => ReadonlyArray<string>
  /** Forgets everything recorded so far (later reads start from here). */
  readonly clear: () => void
  /** Fails with {@link TraceMismatch} unless the lines are exactly `expected`. */
  readonly expectLines: (
    expected: ReadonlyArray<string>,
    filter?: Filter,
  ) => Effect.Effect<void, TraceMismatch>
  /**
   * Fails with {@link TraceMismatch} unless `expected` appear in the lines in this order (other
   * lines may come between them). Each expected entry matches a line that equals it or, for a
   * `RegExp`, a line it matches.
   */
  readonly expectContains: (
    expected: ReadonlyArray<string | RegExp>,
    filter?: Filter,
  ) => Effect.Effect<void, TraceMismatch>
}

/**
 * Starts recording every occurrence of the scheduler in scope: subscribes to its `occurrences`
 * stream before returning, so nothing scheduled afterwards is missed. The subscription ends with
 * the scope. Times are written as {@link LineOptions.time} says.
 *
 * **Example** (A retry and the run that succeeded)
 *
 * ```ts
 * import { Effect } from "effect"
 * import { Schedule, Scheduler } from "@tickwork/runtime"
 * import { TestScheduler, Trace } from "@tickwork/runtime/testing"
 *
 * const program = Effect.gen(function* () {
 *   const trace = yield* Trace.record()
 *   const scheduler = yield* Scheduler.Scheduler
 *   yield* scheduler.schedule({
 *     id: "pay",
 *     schedule: Schedule.once(10),
 *     retry: { maxRetries: 1, base: 5 },
 *     job: (run) => (run.attempt === 1 ? Effect.fail("declined") : Effect.void),
 *   })
 *   yield* TestScheduler.advance(20)
 *   yield* trace.expectContains([/pay retried .* failed -> scheduled@15/, /pay ran .* succeeded -> done/])
 * })
 * TestScheduler.run(program)
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const record = (
  options: LineOptions = {},
): Effect.Effect<Recorder, never, Scheduler.Scheduler | Scope.Scope> =>
  Effect.gen(function* () {
    const scheduler = yield* Scheduler.Scheduler
    let recorded: Array<Ledger.Occurrence> = []
    // Started at once, so the stream has subscribed to the PubSub before `record` returns.
    yield* scheduler.occurrences.pipe(
      Stream.runForEach((o) =>
        Effect.sync(() => {
          // Breaker transitions belong to a breaker, not to a task's trace.
          if (o.kind !== "breaker") recorded.push(o)
        }),
      ),
      Effect.forkScoped({ startImmediately: true }),
    )
    const occurrences = (filter?: Filter) =>
      filter?.id === undefined ? [...recorded] : recorded.filter((o) => o.id === filter.id)
    const lines = (filter?: Filter) => occurrences(filter).map((o) => line(o, options))
    return {
      occurrences,
      lines,
      clear: () => {
        recorded = []
      },
      expectLines: (expected, filter) =>
        Effect.suspend(() => {
          const actual = lines(filter)
          const message = diff(expected, actual)
          return message === undefined
            ? Effect.void
            : Effect.fail(new TraceMismatch({ message, expected, actual }))
        }),
      expectContains: (expected, filter) =>
        Effect.suspend(() => {
          const actual = lines(filter)
          let at = 0
          for (const want of expected) {
            const matches = (l: string) => (typeof want === "string" ? l === want : want.test(l))
            while (at < actual.length && !matches(actual[at] as string)) at++
            if (at === actual.length) {
              return Effect.fail(
                new TraceMismatch({
                  message:
                    `no line ${typeof want === "string" ? JSON.stringify(want) : String(want)} ` +
                    `after the earlier expected lines\nactual (${actual.length} lines):\n${indent(actual)}`,
                  expected: expected.map(String),
                  actual,
                }),
              )
            }
            at++
          }
          return Effect.void
        }),
    }
  })
