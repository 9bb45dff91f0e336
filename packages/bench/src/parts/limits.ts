/**
 * Part 8 — what a flow-control limit (SPEC §20) costs per run, in memory: the core kernel takes
 * and completes N one-shot runs with a pool of `POOL` runs in flight (completed oldest first),
 * with no limit, a group concurrency limit, a concurrency of 1 per key, and a group rate limit.
 * The variants run interleaved in each repetition, so load drifts alike on all of them; the
 * ratio is to the run without limits of the same repetition.
 */
import { Kernel, type Rules, Schedule, Task } from "@tickwork/core"
import { collect } from "../lib/env.ts"
import { fixed, int, ratio, spread, table } from "../lib/format.ts"
import { type Summary, summarize } from "../lib/stats.ts"

/** Runs in flight at once: a busy worker pool. */
const POOL = 64
/** Distinct keys of the per-key variant: each key's runs go in series, keys side by side. */
const KEYS = 1_000
/** Due times spread over this many ms, so the clock moves. */
const SPREAD_MS = 1_000

interface Variant {
  readonly name: string
  readonly limits: Rules.Limits | undefined
  readonly group: string | undefined
  /** The key of task `n`, or none. */
  readonly key: ((n: number) => string) | undefined
}

const variants: ReadonlyArray<Variant> = [
  { name: "no limit", limits: undefined, group: undefined, key: undefined },
  {
    name: "group concurrency 16",
    limits: { groups: { g: { concurrency: 16 } } },
    group: "g",
    key: undefined,
  },
  {
    name: `key concurrency 1 (${int(KEYS)} keys)`,
    limits: { keys: { concurrency: 1 } },
    group: undefined,
    key: (n) => `customer-${n % KEYS}`,
  },
  {
    name: "group rate 10,000 per s",
    limits: { groups: { g: { rate: { max: 10_000, per: 1_000 } } } },
    group: "g",
    key: undefined,
  },
]

/** One variant, one repetition: ns per run (take + complete) and the virtual ms it took. */
const trial = (v: Variant, n: number): { nsPerRun: number; virtualMs: number } => {
  const k = new Kernel.Kernel<number>(v.limits === undefined ? {} : { limits: v.limits })
  for (let i = 0; i < n; i++) {
    k.schedule(
      {
        job: i,
        schedule: Schedule.once(Math.floor((i * SPREAD_MS) / n)),
        ...(v.group === undefined ? {} : { group: v.group }),
        ...(v.key === undefined ? {} : { key: v.key(i) }),
      },
      0,
    )
  }
  collect()
  const ring: Array<Kernel.Run<number> | undefined> = new Array(POOL).fill(undefined)
  let head = 0
  let size = 0
  let done = 0
  let now = 0
  const started = performance.now()
  while (done < n) {
    while (size < POOL) {
      const run = k.takeDue(now)
      if (run === undefined) break
      ring[(head + size) % POOL] = run
      size++
    }
    if (size === 0) {
      const next = k.nextSlot()
      if (next === undefined) throw new Error(`${v.name}: ${n - done} runs lost`)
      now = Math.max(now, next)
      continue
    }
    const run = ring[head] as Kernel.Run<number>
    ring[head] = undefined
    head = (head + 1) % POOL
    size--
    k.complete(run, Task.succeeded, now, false)
    done++
    // The clock moves a ms every pool's worth of ends, so a rate window opens as time passes.
    if (done % POOL === 0) now++
  }
  const nsPerRun = ((performance.now() - started) * 1e6) / n
  if (k.stats().scopes > 1) throw new Error(`${v.name}: ${k.stats().scopes} scopes kept`)
  return { nsPerRun, virtualMs: now }
}

/** The summaries of {@link runLimits}, one per variant. */
export interface LimitsSummary {
  readonly name: string
  readonly nsPerRun: Summary
  /** ns per run over the no-limit run of the same repetition. */
  readonly ratio: Summary
  /** Virtual ms to run them all (a rate limit paces them). */
  readonly virtualMs: number
}

/** Runs part 8: `reps` repetitions of every variant at `n` tasks. */
export const runLimits = (
  n: number,
  reps: number,
  log: (line: string) => void,
): ReadonlyArray<LimitsSummary> => {
  // One warm-up repetition, not counted: the JIT sees every path before anything is timed.
  for (const v of variants) trial(v, Math.min(n, 20_000))
  const ns = variants.map(() => [] as Array<number>)
  const ratios = variants.map(() => [] as Array<number>)
  const virtualMs = variants.map(() => 0)
  for (let rep = 0; rep < reps; rep++) {
    let base = Number.NaN
    variants.forEach((v, i) => {
      const t = trial(v, n)
      if (i === 0) base = t.nsPerRun
      ns[i]?.push(t.nsPerRun)
      ratios[i]?.push(t.nsPerRun / base)
      virtualMs[i] = t.virtualMs
      log(
        `rep ${rep + 1} ${v.name}: ${fixed(t.nsPerRun, 0)} ns/run, ${int(t.virtualMs)} virtual ms`,
      )
    })
  }
  return variants.map((v, i) => ({
    name: v.name,
    nsPerRun: summarize(ns[i] ?? []),
    ratio: summarize(ratios[i] ?? []),
    virtualMs: virtualMs[i] ?? 0,
  }))
}

/** Part 8's table: ns per run, ratio to no limit, virtual time to run them all. */
export const limitsTable = (rows: ReadonlyArray<LimitsSummary>): string =>
  table(
    [
      { title: "limit", align: "left" },
      { title: "ns/run (min–max)" },
      { title: "× no limit" },
      { title: "virtual ms" },
    ],
    rows.map((r) => [
      r.name,
      spread(r.nsPerRun, (x) => fixed(x, 0)),
      spread(r.ratio, ratio),
      int(r.virtualMs),
    ]),
  )
