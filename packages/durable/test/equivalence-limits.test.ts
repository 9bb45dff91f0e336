/**
 * Flow control on a durable store decides nothing by itself (SPEC §20): for random `limits`
 * (groups and keys, concurrency and rate) and random tasks in those groups and under those keys,
 * some with a `dedup` key (SPEC §20.3: singleton, debounce, throttle) and scheduled at random
 * instants, a durable scheduler on SQLite under TestClock starts the same runs at the same
 * virtual times in the same order as the core kernel stepped like its driver, answers every
 * schedule request the same (which task holds the key, and whether it was created, deduplicated
 * or replaced), and ends with every task in the same state, with the same wait (its cause and
 * scope) when a limit holds it back.
 *
 * Runs take virtual time (`ms`) so concurrency limits bind; the durable pool has a worker per
 * task, so only the limits hold runs back. Handler limits (`limits.handlers`) are a store's only
 * and have no kernel counterpart: `limits.test.ts` covers them.
 *
 * Runs end through gates, one per virtual instant, so that runs ending at one instant end
 * together (see `endGates`), as they do in a live process. Past differences the property found
 * are replayed first, as fixed examples (`found`). Runs: `FC_RUNS_LIMITS` (default 20, about
 * 10 s here); the test's title names its seed, so a failure (or a timeout) replays with `FC_SEED`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Kernel, type Rules, Schedule, Task } from "@tickwork/core"
import { Deferred, Effect, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import { type DurableScheduler, Handler } from "../src/index.ts"
import { advance, settle, sqlite, tempDir, withScheduler } from "./helpers.ts"

const RUNS = Number(process.env.FC_RUNS_LIMITS ?? 20)
/** fast-check's seed, in the test's title; `FC_SEED` replays one. */
const SEED = Number(process.env.FC_SEED ?? Math.floor(Math.random() * 2 ** 31))

/** Virtual time the property looks at, ms from 0. */
const HORIZON = 800

type Mode = "singleton" | "debounce" | "throttle"

interface Spec {
  readonly kind: "once" | "fixed-rate"
  readonly period: number
  readonly delay: number
  readonly priority: Task.Priority
  readonly group: "g1" | "g2" | undefined
  readonly key: "k1" | "k2" | undefined
  /** How long each of its runs takes, virtual ms. */
  readonly ms: number
  /** When the test asks to schedule it, virtual ms. */
  readonly at: number
  readonly dedup:
    | { readonly key: "d1" | "d2"; readonly mode: Mode; readonly window: number }
    | undefined
}

const limit: fc.Arbitrary<Rules.Limit> = fc
  .record(
    {
      concurrency: fc.integer({ min: 1, max: 3 }),
      rate: fc.record({
        max: fc.integer({ min: 1, max: 3 }),
        per: fc.integer({ min: 20, max: 200 }),
      }),
    },
    { requiredKeys: [] },
  )
  // A scope with neither would not be a limit at all.
  .map((l) => (l.concurrency === undefined && l.rate === undefined ? { concurrency: 1 } : l))

const limits: fc.Arbitrary<Rules.Limits> = fc.record(
  { groups: fc.record({ g1: limit, g2: limit }), keys: limit },
  { requiredKeys: ["groups"] },
)

const spec: fc.Arbitrary<Spec> = fc.record({
  kind: fc.constantFrom("once" as const, "fixed-rate" as const),
  period: fc.integer({ min: 30, max: 200 }),
  delay: fc.integer({ min: 0, max: 150 }),
  priority: fc.constantFrom<Task.Priority>("high", "normal", "low"),
  group: fc.constantFrom("g1" as const, "g2" as const, undefined),
  key: fc.constantFrom("k1" as const, "k2" as const, undefined),
  ms: fc.integer({ min: 0, max: 120 }),
  at: fc.integer({ min: 0, max: 300 }),
  dedup: fc.option(
    fc.record({
      key: fc.constantFrom("d1" as const, "d2" as const),
      mode: fc.constantFrom<Mode>("singleton", "debounce", "throttle"),
      window: fc.integer({ min: 20, max: 300 }),
    }),
    { nil: undefined, freq: 2 },
  ),
})

/** Tasks in the order the test schedules them: by `at`, ties by index. */
const requests = (specs: ReadonlyArray<Spec>) =>
  specs.map((s, i) => ({ s, i })).sort((a, b) => a.s.at - b.s.at || a.i - b.i)

const options = (s: Spec, i: number) => ({
  id: `t${i}`,
  schedule:
    s.kind === "once" ? Schedule.once(s.delay) : Schedule.fixedRate(s.period, { delay: s.delay }),
  priority: s.priority,
  ...(s.group === undefined ? {} : { group: s.group }),
  ...(s.key === undefined ? {} : { key: s.key }),
  ...(s.dedup === undefined
    ? {}
    : {
        dedup: {
          key: s.dedup.key,
          mode: s.dedup.mode,
          ...(s.dedup.mode === "throttle" ? { window: s.dedup.window } : {}),
        },
      }),
})

/** What is compared of a task: its state, next slot, runs started and the wait holding it. */
const taskLine = (
  id: string,
  i: Pick<Task.TaskInfo, "state" | "scheduledFor" | "runNumber" | "waiting"> | undefined,
) =>
  i === undefined
    ? `${id} unknown`
    : `${id} ${i.state} due=${i.state === "scheduled" ? i.scheduledFor : "-"} ` +
      // While a run is in flight the kernel counts it and a durable row does not yet (its
      // count moves at the commit): a difference of its own, not flow control's, so a
      // running task's count is left out; the trace shows every run started.
      `runs=${i.state === "running" ? "-" : i.runNumber}` +
      // The wait's cause and scope. Its `since` and `until` are left out: the two differ there
      // (a row waiting on a group since its slot keeps that `since` in the store while the
      // kernel's restarts when another run takes the room; a rate wait's `until` as last
      // written by a claim against the kernel's fresh one); the trace holds the starts.
      (i.waiting === undefined ? "" : ` waiting=${i.waiting.cause}/${i.waiting.scope}`)

interface Observed {
  /** Runs started (`id:slot#attempt@start`) and answers to schedule requests, in order. */
  readonly trace: ReadonlyArray<string>
  readonly tasks: ReadonlyArray<string>
}

/** A schedule request's answer as text: the key's holder and the outcome, or the error's tag. */
const answerLine = (i: number, a: unknown) => {
  const r = a as { readonly id?: string; readonly outcome?: string; readonly _tag?: string }
  return r.outcome === undefined
    ? `schedule t${i}: ${r._tag ?? String(a)}`
    : `schedule t${i}: ${r.id} ${r.outcome}`
}

/**
 * The kernel stepped like the core's driver with runs that take time: at each instant, the runs
 * ending then complete first, then what is due starts; the test's schedule requests at an
 * instant come after the scheduler has settled there, as the durable leg makes them.
 */
const kernelTrace = (lim: Rules.Limits, specs: ReadonlyArray<Spec>): Observed => {
  const k = new Kernel.Kernel<number>({ limits: lim })
  const trace: Array<string> = []
  const running: Array<{ readonly run: Kernel.Run<number>; readonly end: number }> = []
  const pending = requests(specs)
  let now = 0
  for (let guard = 0; ; guard++) {
    if (guard > 100_000) throw new Error(`kernel loop at ${now}: ${trace.slice(-5)}`)
    running.sort((a, b) => a.end - b.end)
    while (running.length > 0 && (running[0] as (typeof running)[number]).end <= now) {
      const { run } = running.shift() as (typeof running)[number]
      k.complete(run, Task.succeeded, now, false)
    }
    const requestAt = pending[0]?.s.at ?? Number.POSITIVE_INFINITY
    // No run may start past the next instant something else happens, nor at the end of a run
    // before that run has completed (times are whole ms).
    const ends = (running[0]?.end ?? Number.POSITIVE_INFINITY) - 1
    const until = Math.min(ends, requestAt, HORIZON)
    const run = k.takeDue(now, until)
    if (run !== undefined) {
      now = Math.max(now, run.startedAt)
      trace.push(`${run.id}:${run.scheduledFor}#${run.attempt}@${run.startedAt}`)
      running.push({ run, end: now + (specs[run.job] as Spec).ms })
      continue
    }
    if (requestAt <= now) {
      const { s, i } = pending.shift() as (typeof pending)[number]
      trace.push(answerLine(i, k.scheduleDeduplicated({ ...options(s, i), job: i }, now)))
      continue
    }
    if (now >= HORIZON) break
    now = Math.min(ends + 1, requestAt, HORIZON)
  }
  return { trace, tasks: specs.map((_, i) => taskLine(`t${i}`, k.info(`t${i}`))) }
}

/**
 * The instants at which runs end, each a gate that opens at that virtual instant, before anything
 * else due then. Runs ending at one instant end together, as in a live process, where timers due
 * at one millisecond resume their fibers in one scheduler batch (so one commit takes all their
 * ends before the next claim). `TestClock` wakes its sleepers one by one, each only after all
 * the work the one before caused, so runs each sleeping on it would end one after another, with
 * a commit and a claim between each: not what the kernel's step (every end, then the takes)
 * nor a live process does. One sleeper per instant, all made at 0 before the scheduler starts,
 * wake before its own timers at the same instant (`TestClock` wakes ties in the order made).
 */
const endGates = (horizon: number) =>
  Effect.gen(function* () {
    const gates = new Map<number, Deferred.Deferred<void>>()
    const gate = (at: number) => {
      let g = gates.get(at)
      if (g === undefined) {
        g = Deferred.makeUnsafe<void>()
        gates.set(at, g)
      }
      return g
    }
    for (let at = 1; at <= horizon; at++) {
      yield* Effect.forkChild(
        Effect.andThen(
          Effect.sleep(at),
          Effect.sync(() => Deferred.doneUnsafe(gate(at), Effect.void)),
        ),
        { startImmediately: true },
      )
    }
    /** Waits until `at`, virtual ms from 0: at once when it has passed. */
    return (at: number, now: number) => (at <= now ? Effect.void : Deferred.await(gate(at)))
  })

/** The same requests on a durable scheduler on SQLite, the TestClock moved from one to the next. */
const durableTrace = (lim: Rules.Limits, specs: ReadonlyArray<Spec>) =>
  Effect.gen(function* () {
    const t = tempDir()
    const trace: Array<string> = []
    const until = yield* endGates(HORIZON)
    const handler = Handler.make("h", Schema.Struct({ ms: Schema.Number }), (p, run) =>
      Effect.suspend(() => {
        trace.push(`${run.id}:${run.scheduledFor}#${run.attempt}@${run.startedAt}`)
        return until(run.startedAt + p.ms, run.startedAt)
      }),
    )
    const workers = specs.length + 1
    const observed = yield* withScheduler(
      sqlite(t.file()),
      { handlers: [handler], workers, limits: lim },
      (d: DurableScheduler.DurableSchedulerShape) =>
        Effect.gen(function* () {
          let now = 0
          for (const { s, i } of requests(specs)) {
            yield* advance(d, s.at - now)
            now = s.at
            // The line goes where the request was made: the dispatcher may start a run it
            // makes due before the answer is back.
            const line = trace.push("") - 1
            const answer = yield* Effect.result(
              d.scheduleDeduplicated({ ...options(s, i), handler, payload: { ms: s.ms } }),
            )
            trace[line] = answerLine(i, answer._tag === "Success" ? answer.success : answer.failure)
            yield* settle(d)
          }
          yield* advance(d, HORIZON - now)
          const tasks: Array<string> = []
          for (let i = 0; i < specs.length; i++) {
            tasks.push(taskLine(`t${i}`, Option.getOrUndefined(yield* d.info(`t${i}`))))
          }
          // Runs still waiting for their end would hold the close (it drains them) forever.
          for (let i = 0; i < specs.length; i++) yield* d.cancel(`t${i}`, { interrupt: true })
          return { trace: [...trace], tasks }
        }),
    )
    t.cleanup()
    return observed
  })

/** A spec with the fields a found case leaves at their defaults. */
const task = (s: Partial<Spec>): Spec => ({
  kind: "once",
  period: 30,
  delay: 0,
  priority: "normal",
  group: undefined,
  key: undefined,
  ms: 0,
  at: 0,
  dedup: undefined,
  ...s,
})

/** Differences the property found, each fixed since; replayed before the random cases. */
const found: Array<[Rules.Limits, Array<Spec>]> = [
  // Two runs of different keys end at one instant: both places are free at the next claim,
  // so the waiter due first (t2) goes first (each end alone would start t3 first).
  [
    { groups: { g1: { concurrency: 2 } }, keys: { concurrency: 1 } },
    [
      task({ group: "g1", key: "k1", ms: 50 }),
      task({ group: "g1", key: "k2", ms: 50 }),
      task({ delay: 10, group: "g1", key: "k2", ms: 5 }),
      task({ delay: 20, group: "g1", key: "k1", ms: 5 }),
    ],
  ],
  // A concurrency waiter whose group has room again inside its rate window shows the rate
  // wait (core's `waitingOf`; seed 1242321396).
  [
    {
      groups: { g1: { concurrency: 1 }, g2: { concurrency: 1, rate: { max: 1, per: 47 } } },
      keys: { concurrency: 1 },
    },
    [
      task({ kind: "fixed-rate", priority: "high", group: "g2", key: "k1", ms: 60 }),
      task({
        kind: "fixed-rate",
        period: 48,
        delay: 137,
        priority: "high",
        group: "g2",
        key: "k1",
        ms: 1,
        at: 68,
      }),
    ],
  ],
  // A claim passes t0 over on its key's rate window, then starts t1, which fills their group:
  // t0 waits on the group now (a store's `admitDue` decides its waits after all its admissions;
  // seed 968955985).
  [
    { groups: { g1: { concurrency: 1 } }, keys: { rate: { max: 1, per: 20 } } },
    [
      task({ kind: "fixed-rate", priority: "high", group: "g1", key: "k1" }),
      task({ kind: "fixed-rate", delay: 27, priority: "high", group: "g1", ms: 21, at: 13 }),
      task({ priority: "high", group: "g1", key: "k1", at: 21 }),
    ],
  ],
  // Two rate windows opening at one instant: the wait names the first of them, as
  // `Rules.admit` (core's `waitingOf`; seed 1125877484).
  [
    { groups: { g1: { rate: { max: 1, per: 30 } } }, keys: { rate: { max: 2, per: 70 } } },
    [
      task({ kind: "fixed-rate", delay: 1, priority: "high", group: "g1", key: "k2" }),
      task({ kind: "fixed-rate", priority: "high", group: "g1", key: "k2", at: 1 }),
    ],
  ],
]

describe("flow control: the durable store equals the core kernel (SPEC §20)", () => {
  it.effect(
    `random limits, keys and dedup keys: the durable trace is the kernel's (seed ${SEED})`,
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(limits, fc.array(spec, { minLength: 1, maxLength: 6 }), (lim, specs) =>
            Effect.runPromise(
              Effect.gen(function* () {
                const actual = yield* durableTrace(lim, specs)
                const expected = kernelTrace(lim, specs)
                expect(actual.trace).toEqual(expected.trace)
                expect(actual.tasks).toEqual(expected.tasks)
              }).pipe(Effect.provide(TestClock.layer())) as Effect.Effect<void, unknown>,
            ),
          ),
          {
            numRuns: RUNS + found.length,
            examples: found,
            seed: SEED,
          },
        ),
      ),
    // Generous: a case takes about a second here, several on a busy CI box, and a failure
    // shrinks through dozens more.
    120_000 + RUNS * 5_000,
  )
})
