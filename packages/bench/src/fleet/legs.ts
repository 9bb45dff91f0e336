/**
 * Where a tickwork job's pickup goes (`FLEET_LEGS=1`): the steady phase's jobs, each traced
 * from its insert to its start through the timestamps the workers print (probe.ts) and the
 * producer's own (insert sent, insert answered). For a job k started first by worker w, whose
 * claim c (at w) took it:
 *
 * ```text
 * insert sent ─ commit ─► notice at w ─ wake ─► pass ready ─► claim sent ─ round trip ─► claim back ─► run starts
 *  (producer)            (first ≥ insert)       (see below)     (c.sent)                   (c.returned)   (r k)
 * ```
 *
 * "Pass ready" is when w's dispatcher was free to begin the pass that sent c: the later of its
 * last wait's return and its previous claim's answer (a full claim loops at once). The legs are
 * additive when the pass began after k's notice; a pass already under way when the notice
 * came (it was claiming, or its poll fired) took k without it, and counts in "claimed before
 * its notice" instead of the notice and wake legs.
 */
import { fixed, int, table } from "../lib/format.ts"
import { CONCURRENCY } from "./settings.ts"

/** One worker's pickup-path timestamps (epoch ms, µs resolution), in the order printed. */
export class WorkerTrace {
  readonly notices: Array<number> = []
  readonly waits: Array<{ at: number; why: string }> = []
  readonly claims: Array<{
    sent: number
    returned: number
    limit: number
    keys: ReadonlyArray<string>
  }> = []
  /** The dispatcher's parks: when, and whether a worker was free (else it waits for one). */
  readonly parks: Array<{ at: number; free: boolean }> = []
  readonly commits: Array<{ sent: number; returned: number; rows: number }> = []
  /** When the dispatcher's `nextTimes` reads answered. */
  readonly reads: Array<number> = []
  readonly runs = new Map<string, number>()
  /** Reads one line of the worker's output; false when it is not a probe line. */
  line(line: string): boolean {
    const [kind, a, b, c, d] = line.split(" ")
    if (kind === "n" && a !== undefined) this.notices.push(Number(a))
    else if (kind === "w" && a !== undefined) this.waits.push({ at: Number(a), why: b ?? "" })
    else if (kind === "c" && a !== undefined && b !== undefined)
      this.claims.push({
        sent: Number(a),
        returned: Number(b),
        limit: Number(c),
        keys: d === undefined || d === "-" ? [] : d.split(","),
      })
    else if (kind === "p" && a !== undefined) this.parks.push({ at: Number(a), free: b === "1" })
    else if (kind === "t" && a !== undefined) this.reads.push(Number(a))
    else if (kind === "k" && a !== undefined && b !== undefined)
      this.commits.push({ sent: Number(a), returned: Number(b), rows: Number(c) })
    else if (kind === "r" && a !== undefined && b !== undefined) {
      if (!this.runs.has(a)) this.runs.set(a, Number(b))
    } else return false
    return true
  }
}

/** The legs, in path order. */
export const LEGS = [
  "insert: sent → answered",
  "insert sent → notice at the claiming worker",
  "notice → pass ready",
  "pass ready → claim sent",
  "claim sent → answered",
  "claim answered → run starts",
  "pickup (insert sent → run starts)",
] as const

/** What a steady phase's trace says. */
export interface LegReport {
  /** Per leg (`LEGS`): p50, p99 and the jobs it was measured on. */
  readonly legs: ReadonlyArray<{ leg: string; p50: number; p99: number; n: number }>
  /** Jobs traced. */
  readonly jobs: number
  /** Jobs whose claiming pass began before their notice reached that worker. */
  readonly beforeNotice: number
  /**
   * What began the claiming pass: a wake while a worker was free (a notice, mostly), a wake
   * after parking with none free (a run's end or a commit gave one back), the poll/due timer,
   * or a claim that took all it asked for looping on.
   */
  readonly passes: Record<"wake" | "wakeForWorker" | "timer" | "loop", number>
  /** Claims sent by all workers in the phase, and those that came back empty. */
  readonly claims: number
  readonly emptyClaims: number
  /** Rows per non-empty claim, mean; claims that asked for fewer than 8 rows (few free). */
  readonly rowsPerClaim: number
  readonly smallClaims: number
  /** The dispatchers' `nextTimes` reads in the phase (a round trip each). */
  readonly reads: number
  /** The dispatchers' parks in the phase, and those with no worker free. */
  readonly parks: number
  readonly parksForWorker: number
  /**
   * At the parks with no worker free, the median runs on the pool (started, not ended) and
   * claims held (claimed, not yet committed: runs, and ended runs waiting for their commit),
   * and those where the pool had a slot free: the held-claims bound (twice the workers)
   * stopped the claim, commits lagging behind.
   */
  readonly runningAtPark: number
  readonly heldAtPark: number
  readonly heldBound: number
  /** Pickup p50 of the jobs inserted in each second of the phase (a backlog grows across them). */
  readonly bySecond: ReadonlyArray<number>
  /** Handler run time (its own start → end, ms): 50 ms asked. */
  readonly runP50: number
  readonly runP99: number
  /** Commits in the phase: duration p50/p99 (ms) and rows per commit (mean). */
  readonly commits: number
  readonly commitP50: number
  readonly commitP99: number
  readonly rowsPerCommit: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
  Number.NaN

/** Index of the last element ≤ x in ascending `xs` (-1 when none). */
const lastAtOrBefore = (xs: ReadonlyArray<number>, x: number): number => {
  let lo = 0
  let hi = xs.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((xs[mid] as number) <= x) lo = mid + 1
    else hi = mid
  }
  return lo - 1
}

/**
 * The legs of the jobs `keys`, inserted (sent) at `insertAt` and answered at `answeredAt`,
 * from the workers' traces (`traces[w]`); `from`/`to` bound the claims counted (the phase).
 */
export const legReport = (
  keys: ReadonlyArray<string>,
  insertAt: ReadonlyMap<string, number>,
  answeredAt: ReadonlyMap<string, number>,
  traces: ReadonlyArray<WorkerTrace>,
  ends: ReadonlyMap<string, ReadonlyArray<{ readonly w: number; readonly at: number }>>,
  from: number,
  to: number,
): LegReport => {
  const values: Array<Array<number>> = LEGS.map(() => [])
  const passes = { wake: 0, wakeForWorker: 0, timer: 0, loop: 0 }
  let beforeNotice = 0
  let jobs = 0
  const seconds: Array<Array<number>> = []
  // Per worker: claim by key, and its claims' and waits' times in order.
  const index = traces.map((t) => {
    const byKey = new Map<string, number>()
    t.claims.forEach((c, i) => {
      for (const k of c.keys) if (!byKey.has(k)) byKey.set(k, i)
    })
    return { byKey, waitAt: t.waits.map((w) => w.at), parkAt: t.parks.map((p) => p.at) }
  })
  for (const k of keys) {
    const t0 = insertAt.get(k)
    if (t0 === undefined) continue
    const answered = answeredAt.get(k)
    if (answered !== undefined) (values[0] as Array<number>).push(answered - t0)
    // The worker that ran it first, by its own start reading.
    let w = -1
    let runAt = Number.POSITIVE_INFINITY
    traces.forEach((t, i) => {
      const r = t.runs.get(k)
      if (r !== undefined && r < runAt) {
        runAt = r
        w = i
      }
    })
    const trace = traces[w]
    const ix = index[w]
    if (trace === undefined || ix === undefined) continue
    const ci = ix.byKey.get(k)
    const claim = ci === undefined ? undefined : trace.claims[ci]
    if (ci === undefined || claim === undefined) continue
    jobs++
    const ni = lastAtOrBefore(trace.notices, t0) + 1
    const notice = trace.notices[ni]
    const wi = lastAtOrBefore(ix.waitAt, claim.sent)
    const wait = trace.waits[wi]
    const previous = trace.claims[ci - 1]
    const waitAt = wait?.at ?? Number.NEGATIVE_INFINITY
    const loopAt = previous?.returned ?? Number.NEGATIVE_INFINITY
    const ready = Math.max(waitAt, loopAt)
    // A pass with no start in the trace (the probe's first lines) is not classified.
    if (Number.isFinite(ready)) {
      if (loopAt >= waitAt) passes.loop++
      else if (wait?.why !== "wake") passes.timer++
      else if (trace.parks[lastAtOrBefore(ix.parkAt, waitAt)]?.free === false)
        passes.wakeForWorker++
      else passes.wake++
    }
    if (notice !== undefined) (values[1] as Array<number>).push(notice - t0)
    if (notice !== undefined && notice <= ready) (values[2] as Array<number>).push(ready - notice)
    else if (Number.isFinite(ready)) beforeNotice++
    if (Number.isFinite(ready)) (values[3] as Array<number>).push(claim.sent - ready)
    ;(values[4] as Array<number>).push(claim.returned - claim.sent)
    ;(values[5] as Array<number>).push(runAt - claim.returned)
    ;(values[6] as Array<number>).push(runAt - t0)
    const second = Math.floor((t0 - from) / 1000)
    if (second >= 0) {
      const list = seconds[second] ?? []
      list.push(runAt - t0)
      seconds[second] = list
    }
  }
  let claims = 0
  let emptyClaims = 0
  let smallClaims = 0
  let rows = 0
  let parks = 0
  let parksForWorker = 0
  let reads = 0
  let committed = 0
  const commitMs: Array<number> = []
  for (const t of traces) {
    for (const c of t.claims) {
      if (c.sent < from || c.sent > to) continue
      claims++
      if (c.keys.length === 0) emptyClaims++
      if (c.limit < 8) smallClaims++
      rows += c.keys.length
    }
    for (const r of t.reads) if (r >= from && r <= to) reads++
    for (const p of t.parks) {
      if (p.at < from || p.at > to) continue
      parks++
      if (!p.free) parksForWorker++
    }
    for (const c of t.commits) {
      if (c.sent < from || c.sent > to) continue
      commitMs.push(c.returned - c.sent)
      committed += c.rows
    }
  }
  commitMs.sort((a, b) => a - b)
  // Per worker, sorted: run starts, run ends (the part's whole-ms reading, +1 so an end in the
  // same ms counts after it), claimed rows by answer, committed rows by answer.
  const running: Array<number> = []
  const held: Array<number> = []
  let heldBound = 0
  const runMs: Array<number> = []
  traces.forEach((t, w) => {
    const starts = [...t.runs.values()].sort((a, b) => a - b)
    const endAt: Array<number> = []
    for (const [k, list] of ends) {
      const e = list.find((x) => x.w === w)
      if (e === undefined) continue
      endAt.push(e.at + 1)
      const r = t.runs.get(k)
      if (r !== undefined && r >= from && r <= to) runMs.push(e.at + 1 - r)
    }
    endAt.sort((a, b) => a - b)
    const claimed: Array<number> = [0]
    const claimedAt: Array<number> = []
    for (const c of t.claims) {
      claimedAt.push(c.returned)
      claimed.push((claimed[claimed.length - 1] as number) + c.keys.length)
    }
    const committedRows: Array<number> = [0]
    const committedAt: Array<number> = []
    for (const c of [...t.commits].sort((a, b) => a.returned - b.returned)) {
      committedAt.push(c.returned)
      committedRows.push((committedRows[committedRows.length - 1] as number) + c.rows)
    }
    for (const p of t.parks) {
      if (p.free || p.at < from || p.at > to) continue
      const onPool = lastAtOrBefore(starts, p.at) - lastAtOrBefore(endAt, p.at)
      running.push(onPool)
      if (onPool < CONCURRENCY) heldBound++
      held.push(
        (claimed[lastAtOrBefore(claimedAt, p.at) + 1] as number) -
          (committedRows[lastAtOrBefore(committedAt, p.at) + 1] as number),
      )
    }
  })
  for (const list of [running, held, runMs]) list.sort((a, b) => a - b)
  return {
    legs: LEGS.map((leg, i) => {
      const sorted = (values[i] as Array<number>).sort((a, b) => a - b)
      return { leg, p50: percentile(sorted, 50), p99: percentile(sorted, 99), n: sorted.length }
    }),
    jobs,
    beforeNotice,
    passes,
    claims,
    emptyClaims,
    rowsPerClaim: rows / Math.max(1, claims - emptyClaims),
    smallClaims,
    reads,
    parks,
    parksForWorker,
    bySecond: Array.from(seconds, (list) =>
      percentile(
        (list ?? []).sort((a, b) => a - b),
        50,
      ),
    ),
    runningAtPark: percentile(running, 50),
    heldAtPark: percentile(held, 50),
    heldBound,
    runP50: percentile(runMs, 50),
    runP99: percentile(runMs, 99),
    commits: commitMs.length,
    commitP50: percentile(commitMs, 50),
    commitP99: percentile(commitMs, 99),
    rowsPerCommit: committed / Math.max(1, commitMs.length),
  }
}

const ms = (x: number) => (Number.isFinite(x) ? fixed(x, x >= 100 ? 0 : 1) : "–")

/** The legs of several rows side by side: one column pair per labelled report. */
export const legTable = (
  reports: ReadonlyArray<{ readonly label: string; readonly report: LegReport }>,
): string => {
  const body = table(
    [
      { title: "leg (ms)" },
      ...reports.map((r) => ({ title: `${r.label}: p50 / p99`, align: "right" as const })),
    ],
    LEGS.map((leg, i) => [
      leg,
      ...reports.map(({ report }) => {
        const l = report.legs[i]
        return l === undefined ? "–" : `${ms(l.p50)} / ${ms(l.p99)}`
      }),
    ]),
  )
  const notes = reports.map(
    ({ label, report: r }) =>
      `  ${label}: ${int(r.jobs)} jobs traced; the pass that claimed a job began on a wake with a worker free ${int(r.passes.wake)}, on a wake after parking for a worker ${int(r.passes.wakeForWorker)}, on its timer ${int(r.passes.timer)}, looping after a full claim ${int(r.passes.loop)}; ${int(r.beforeNotice)} claimed before their notice reached that worker; ${int(r.claims)} claims (${int(r.emptyClaims)} empty, ${int(r.smallClaims)} asking for < 8 rows), ${fixed(r.rowsPerClaim, 1)} rows per non-empty claim; ${int(r.reads)} next-times reads; ${int(r.parks)} parks (${int(r.parksForWorker)} with no worker free, there a median ${int(r.runningAtPark)} runs on the pool and ${int(r.heldAtPark)} claims held; ${int(r.heldBound)} of them with a pool slot free: the held-claims bound); runs took ${int(r.runP50)} / ${int(r.runP99)} ms p50 / p99 (50 asked); pickup p50 by second of the phase ${r.bySecond.map((x) => int(x)).join(", ")} ms; ${int(r.commits)} commits of ${fixed(r.rowsPerCommit, 1)} runs, ${ms(r.commitP50)} / ${ms(r.commitP99)} ms p50 / p99`,
  )
  return `${body}\n${notes.join("\n")}`
}
