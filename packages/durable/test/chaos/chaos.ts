/**
 * The chaos run: 4 worker processes (fixtures/pg-worker.ts) on a private PostgreSQL cluster run
 * many tasks of mixed kinds (one-shots, fixed-rate, fixed-delay) while faults hit them on a fixed
 * timeline: SIGKILL of a random worker every few seconds (restarted under a new owner name), one
 * SIGSTOP past the lease then SIGCONT, `pg_terminate_backend` of random connections, and
 * optionally one `pg_ctl restart -m fast`. At the end every (task, slot) that was due is
 * compared with the ledger, and the workers' effects logs with the faults:
 * - due slots come from each task's schedule over the whole run, from its acceptance (the first
 *   slot stored) to the end of the fault window: a fixed-rate task's every grid slot; a
 *   fixed-delay task's chain, each slot its previous run's finish plus the period;
 * - lost: a due slot without a ledger run, or without the event its missed-run policy allows
 *   (`coalesce`: a coalesced event; `skip`: a skipped one; `catch-up`: none, every slot runs);
 * - duplicates: a (task, slot, attempt) started twice, each listed with the fault that cut its
 *   earlier delivery: one in flight then, from its claim to its commit (a commit line the worker
 *   writes from its `occurrences`; never committed: in flight to the end); one that no fault
 *   explains is "beyond in-flight";
 * - failover per kill: from the kill to the restart, in another process, of each run the killed
 *   process had in flight (its effects log's start lines without an end).
 * `pnpm chaos` runs the full size (chaos/main.ts); chaos.test.ts runs a short one in `pnpm test`.
 */
import { existsSync, readFileSync } from "node:fs"
import { PgClient } from "@effect/sql-pg"
import { type MissedRun, Schedule } from "@tickwork/core"
import { Effect, Redacted } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { Postgres } from "../../src/index.ts"
import { child } from "../children.ts"
import { startCluster } from "../cluster.ts"
import { job, type LogLine, parseLog } from "../fixtures/job.ts"
import { tempDir, withScheduler } from "../helpers.ts"

/** The size and timeline of a run. */
export interface ChaosOptions {
  /** One-shot tasks, slots spread over the fault window. */
  readonly oneShots: number
  /** Fixed-rate tasks (period `periodMs`) and as many fixed-delay tasks. */
  readonly recurring: number
  readonly periodMs: number
  /** How long faults go on, ms (the one-shots' slots spread over it). */
  readonly durationMs: number
  /** A SIGKILL of a random worker (restarted) every this many ms. */
  readonly killEveryMs: number
  /** `pg_terminate_backend` of 2 random connections every this many ms. */
  readonly terminateEveryMs: number
  /** Whether to restart the server once (`pg_ctl restart -m fast`). */
  readonly restart: boolean
  /** The workers' lease, ms; the SIGSTOP lasts 1.5 leases. */
  readonly leaseMs: number
  /** Seed of the fault choices. */
  readonly seed: number
  /**
   * SQLite only: the disk under the store is filled about this often (ms; none when absent),
   * held until the store has reported `disk-full` and a second more, then freed (chaos/disk.ts).
   */
  readonly diskFullEveryMs?: number | undefined
  /** Progress lines. */
  readonly log?: ((line: string) => void) | undefined
}

/** A fault, when it happened and whom it hit (`*`: every process). */
export interface Fault {
  /** `disk-full`: never explains a duplicate (a full disk delays commits; it must not repeat runs). */
  readonly kind: "kill" | "stop" | "terminate" | "restart" | "disk-full"
  readonly at: number
  readonly until: number
  readonly owner: string
  readonly detail: string
  /** `disk-full` only: whether the store reported it (else the fault never reached the store). */
  readonly reached?: boolean | undefined
}

/** A (task, slot, attempt) started more than once, and the fault that explains it. */
export interface Duplicate {
  readonly key: string
  readonly starts: number
  readonly fault: string | undefined
  /** The effects log lines of the key: kind, owner, fence, ms since the run began. */
  readonly trace: string
}

/** The figures of a run. */
export interface ChaosReport {
  readonly tasks: number
  readonly due: number
  readonly runs: number
  readonly lost: ReadonlyArray<string>
  readonly duplicates: ReadonlyArray<Duplicate>
  readonly beyondInFlight: ReadonlyArray<Duplicate>
  readonly faults: ReadonlyArray<Fault>
  /** Per run a kill cut off: ms from the kill to its restart in another process. */
  readonly failover: ReadonlyArray<number>
  /** Runs the kills cut off that were never restarted (must be 0). */
  readonly notRestarted: number
  /** One-shots' first-delivery lateness (start − slot), ms: how loaded the machine was. */
  readonly lateness: { readonly p50: number; readonly p99: number }
  /** Each kill: whom, when (ms into the run), how many runs it cut off, the slowest restart. */
  readonly perKill: ReadonlyArray<{
    readonly owner: string
    readonly at: number
    readonly cut: number
    readonly max: number
  }>
  readonly seconds: number
  /** When the run began (epoch ms): fault times are reported from it. */
  readonly started: number
  /**
   * The store's events (claims handed back, take-overs, fenced-out changes) of the tasks of the
   * duplicates no fault explains, as lines: what the store saw of them, to tell why.
   */
  readonly storeEvents?: ReadonlyArray<string>
}

const query = <A extends object>(
  url: string,
  text: string,
  params: ReadonlyArray<unknown> = [],
): Promise<ReadonlyArray<A>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(PgClient.make({ url: Redacted.make(url), maxConnections: 1 }), (sql) =>
        sql.unsafe<A>(text, params),
      ),
    ).pipe(Effect.provide(Reactivity.layer)),
  )

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const until = async (what: string, check: () => Promise<boolean>, ms: number) => {
  const end = Date.now() + ms
  while (!(await check().catch(() => false))) {
    if (Date.now() > end) throw new Error(`chaos: timed out waiting for ${what}`)
    await sleep(100)
  }
}

/** A small seeded PRNG (mulberry32). */
const prng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** p-th percentile of sorted values. */
export const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ??
  Number.NaN

/** Runs the chaos scenario on a private cluster and returns its figures. */
export const chaos = async (o: ChaosOptions): Promise<ChaosReport> => {
  const say = o.log ?? (() => {})
  const random = prng(o.seed)
  const cluster = await startCluster()
  const t = tempDir()
  const started = Date.now()
  const faults: Array<Fault> = []
  type Worker = ReturnType<typeof child> & { owner: string; log: string }
  const logs: Array<string> = []
  let generation = 0
  const spawn = async (slot: number): Promise<Worker> => {
    const owner = `W${slot}.${generation++}`
    const log = t.file(`${owner}.log`)
    logs.push(log)
    let ready = false
    const c = child("pg-worker.ts", [cluster.url, log, owner, String(o.leaseMs)], (line) => {
      if (line === "ready") ready = true
    })
    const end = Date.now() + 60_000
    while (!ready) {
      if (Date.now() > end) throw new Error(`chaos: ${owner} did not start`)
      await sleep(20)
    }
    return { ...c, owner, log }
  }
  const workers: Array<Worker> = []
  try {
    for (let k = 0; k < 4; k++) workers.push(await spawn(k))
    // The tasks: one-shots over the fault window, and recurring ones throughout.
    const seed = job(t.file("seed.log"), "seed")
    const base = Date.now() + 1_000
    const oneShotIds = Array.from({ length: o.oneShots }, (_, k) => `o${k}`)
    const rateIds = Array.from({ length: o.recurring }, (_, k) => `r${k}`)
    const delayIds = Array.from({ length: o.recurring }, (_, k) => `d${k}`)
    // Each missed-run policy on a third of the fixed-rate tasks.
    const policies: ReadonlyArray<MissedRun.MissedRunPolicy> = ["catch-up", "coalesce", "skip"]
    const policyOf = (k: number) => policies[k % 3] as MissedRun.MissedRunPolicy
    await Effect.runPromise(
      withScheduler(
        Postgres.layer({ url: cluster.url }),
        { handlers: [seed], claim: false },
        (api) =>
          Effect.gen(function* () {
            yield* api.scheduleAll(
              oneShotIds.map((id, k) => ({
                id,
                handler: seed,
                payload: { ms: k % 200 },
                schedule: Schedule.at(base + Math.floor((k * o.durationMs) / o.oneShots)),
              })),
            )
            yield* api.scheduleAll([
              ...rateIds.map((id, k) => ({
                id,
                handler: seed,
                payload: { ms: 20 + (k % 80) },
                schedule: Schedule.fixedRate(o.periodMs, { delay: 1_000 + k }),
                missedRuns: policyOf(k),
              })),
              ...delayIds.map((id, k) => ({
                id,
                handler: seed,
                payload: { ms: 20 + (k % 80) },
                schedule: Schedule.fixedDelay(o.periodMs, { delay: 1_000 + k }),
              })),
            ])
          }),
      ) as Effect.Effect<void, unknown>,
    )
    // Each recurring task's first slot, as accepted: where its due slots begin.
    const firstSlot = new Map(
      (
        await query<{ id: string; slot: string }>(
          cluster.url,
          "SELECT id, slot::text AS slot FROM tickwork_tasks WHERE id LIKE 'r%' OR id LIKE 'd%'",
        )
      ).map((r) => [r.id, Number(r.slot)]),
    )
    say(
      `chaos: ${o.oneShots + 2 * o.recurring} tasks scheduled, 4 workers, faults for ${o.durationMs} ms`,
    )

    // The fault timeline, on the real clock.
    const end = base + o.durationMs
    let nextKill = base + o.killEveryMs
    let nextTerminate = base + o.terminateEveryMs / 2
    const stopAt = base + Math.floor(o.durationMs * 0.3)
    const restartAt = base + Math.floor(o.durationMs * 0.6)
    let stopped = false
    let restarted = !o.restart
    while (Date.now() < end) {
      const now = Date.now()
      if (!stopped && now >= stopAt) {
        stopped = true
        const w = workers[Math.floor(random() * workers.length)] as Worker
        w.process.kill("SIGSTOP")
        const at = Date.now()
        await sleep(Math.floor(o.leaseMs * 1.5))
        w.process.kill("SIGCONT")
        faults.push({ kind: "stop", at, until: Date.now(), owner: w.owner, detail: "SIGSTOP" })
        say(`chaos: +${at - started} ms SIGSTOP ${w.owner} for ${Date.now() - at} ms, then SIGCONT`)
      } else if (!restarted && now >= restartAt) {
        restarted = true
        const at = Date.now()
        cluster.restart()
        faults.push({
          kind: "restart",
          at,
          until: Date.now(),
          owner: "*",
          detail: "pg_ctl restart -m fast",
        })
        say(`chaos: +${at - started} ms pg_ctl restart -m fast (${Date.now() - at} ms)`)
      } else if (now >= nextKill) {
        const k = Math.floor(random() * workers.length)
        const w = workers[k] as Worker
        w.process.kill("SIGKILL")
        const at = Date.now()
        await w.exited
        faults.push({ kind: "kill", at, until: at, owner: w.owner, detail: "SIGKILL" })
        say(`chaos: +${at - started} ms SIGKILL ${w.owner}`)
        workers[k] = await spawn(k)
        // The next kill a whole interval after this one's replacement runs (a slow start on a
        // busy machine does not bunch the kills up).
        nextKill = Date.now() + o.killEveryMs
      } else if (now >= nextTerminate) {
        nextTerminate = Date.now() + o.terminateEveryMs
        const at = Date.now()
        const hit = await query<{ name: string }>(
          cluster.url,
          `SELECT application_name AS name, pg_terminate_backend(pid) AS ok FROM (
             SELECT pid, application_name FROM pg_stat_activity
             WHERE datname = current_database() AND application_name LIKE 'tickwork%'
               AND pid <> pg_backend_pid() ORDER BY random() LIMIT 2) c`,
        ).catch(() => [])
        say(`chaos: +${at - started} ms pg_terminate_backend: ${hit.map((h) => h.name).join(", ")}`)
        faults.push({
          kind: "terminate",
          at,
          until: Date.now(),
          owner: "*",
          detail: `pg_terminate_backend: ${hit.map((h) => h.name).join(", ")}`,
        })
      } else await sleep(20)
    }
    say("chaos: faults over; waiting for every one-shot and stopping the recurring tasks")
    await until(
      "every one-shot to finish",
      async () => {
        const [row] = await query<{ n: string }>(
          cluster.url,
          "SELECT count(*)::text AS n FROM tickwork_tasks WHERE id LIKE 'o%' AND state = 'done'",
        )
        return Number(row?.n) === o.oneShots
      },
      180_000,
    )
    // Every slot up to the end is due: wait until each recurring task has moved past it (the
    // slot it waits for, or runs, is later) before stopping them. (Some of 200 tasks every
    // 500 ms are always running: their state cannot be asked to be `scheduled`.)
    await until(
      "every recurring task's next slot to pass the end of the fault window",
      async () => {
        const [row] = await query<{ n: string }>(
          cluster.url,
          `SELECT count(*)::text AS n FROM tickwork_tasks
           WHERE (id LIKE 'r%' OR id LIKE 'd%') AND state IN ('scheduled', 'running')
             AND slot <= $1`,
          [end],
        )
        return Number(row?.n) === 0
      },
      120_000,
    )
    await until(
      "recurring tasks to stop",
      async () => {
        await query(
          cluster.url,
          "UPDATE tickwork_tasks SET state = 'cancelled' WHERE state = 'scheduled'",
        )
        const live = await query(
          cluster.url,
          "SELECT 1 FROM tickwork_tasks WHERE state IN ('scheduled', 'running')",
        )
        return live.length === 0
      },
      60_000,
    )
    for (const w of workers) w.process.kill("SIGKILL")
    await Promise.all(workers.map((w) => w.exited))
    workers.length = 0

    // ---------------------------------------------------------------- the ledger
    const runs = await query<LedgerRun>(
      cluster.url,
      "SELECT task_id, slot::text AS slot, attempt, finished_at::text, next_run_at::text FROM tickwork_runs",
    )
    const events = await query<LedgerEvent>(
      cluster.url,
      "SELECT task_id, kind, first_slot::text, last_slot::text FROM tickwork_events WHERE kind IN ('skipped', 'coalesced')",
    )
    const report = analyze(o, {
      runs,
      events,
      logs,
      faults,
      oneShotIds,
      rateIds,
      delayIds,
      firstSlot,
      base,
      end,
      started,
      policyOf,
    })
    if (report.beyondInFlight.length === 0) return report
    const ids = [...new Set(report.beyondInFlight.map((d) => d.key.split(" ")[0] as string))]
    const seen = await query<{
      task_id: string
      kind: string
      at: string
      fence: string | null
      owner: string | null
      cause: string | null
      detail: string | null
    }>(
      cluster.url,
      `SELECT task_id, kind, at::text, fence::text, owner, cause, detail FROM tickwork_events
       WHERE task_id = ANY($1) AND kind NOT IN ('scheduled', 'ran') ORDER BY task_id, at`,
      [ids],
    )
    return {
      ...report,
      storeEvents: seen.map(
        (e) =>
          `${e.task_id} ${e.kind} +${Number(e.at) - started} f${e.fence} ${e.owner}: ${e.cause ?? ""} ${e.detail ?? ""}`,
      ),
    }
  } finally {
    for (const w of workers) w.process.kill("SIGKILL")
    await Promise.all(workers.map((w) => w.exited))
    cluster.remove()
    t.cleanup()
  }
}

/** A ledger run as the chaos count reads it (numbers as text or numbers, by store). */
export interface LedgerRun {
  readonly task_id: string
  readonly slot: string | number
  readonly attempt: number
  readonly finished_at: string | number
  readonly next_run_at: string | number | null
}

/** A `skipped` or `coalesced` ledger event. */
export interface LedgerEvent {
  readonly task_id: string
  readonly kind: "skipped" | "coalesced"
  readonly first_slot: string | number
  readonly last_slot: string | number
}

/** What a run leaves to count: the ledger, the effects logs, the faults and the tasks. */
export interface ChaosRecord {
  readonly runs: ReadonlyArray<LedgerRun>
  readonly events: ReadonlyArray<LedgerEvent>
  /** The workers' effects logs (fixtures/job.ts), one file each. */
  readonly logs: ReadonlyArray<string>
  readonly faults: ReadonlyArray<Fault>
  readonly oneShotIds: ReadonlyArray<string>
  readonly rateIds: ReadonlyArray<string>
  readonly delayIds: ReadonlyArray<string>
  /** Each recurring task's first slot, as accepted. */
  readonly firstSlot: ReadonlyMap<string, number>
  /** The first one-shot's slot, and the end of the fault window (epoch ms). */
  readonly base: number
  readonly end: number
  /** When the run began (epoch ms). */
  readonly started: number
  readonly policyOf: (k: number) => MissedRun.MissedRunPolicy
}

/**
 * The strict count, the same for every store: due slots from each task's schedule over the
 * whole run, lost slots, duplicates each explained by a fault that cut a delivery between its
 * claim and its commit, and failover per kill.
 */
export const analyze = (o: ChaosOptions, r: ChaosRecord): ChaosReport => {
  const { runs, events, logs, faults, oneShotIds, rateIds, delayIds, firstSlot, base, end } = r
  const { started, policyOf } = r
  const ran = new Map<string, Array<(typeof runs)[number]>>()
  for (const r of runs) {
    const list = ran.get(r.task_id) ?? []
    list.push(r)
    ran.set(r.task_id, list)
  }
  const lost: Array<string> = []
  for (const id of oneShotIds) if (!ran.has(id)) lost.push(`${id} (one-shot, never ran)`)
  let due = o.oneShots
  // A fixed-rate task's due slots: its grid from the first slot accepted to the end. Each ran,
  // or (policy `coalesce` / `skip`) lies in an event of that kind; `catch-up` runs them all.
  for (const [k, id] of rateIds.entries()) {
    const policy = policyOf(k)
    const have = new Set((ran.get(id) ?? []).map((r) => Number(r.slot)))
    const allowed = policy === "coalesce" ? "coalesced" : policy === "skip" ? "skipped" : undefined
    const dropped = events.filter((e) => e.task_id === id && e.kind === allowed)
    const first = firstSlot.get(id)
    if (first === undefined) {
      lost.push(`${id} (not accepted)`)
      continue
    }
    for (let s = first; s <= end; s += o.periodMs) {
      due++
      if (have.has(s)) continue
      const covered = dropped.some((e) => Number(e.first_slot) <= s && s <= Number(e.last_slot))
      if (!covered) lost.push(`${id}@${s} (fixed-rate, ${policy})`)
    }
  }
  // A fixed-delay task's due slots: the first accepted, then each run's finish plus the
  // period, while that is within the window.
  for (const id of delayIds) {
    const bySlot = new Map((ran.get(id) ?? []).map((r) => [Number(r.slot), r]))
    let s = firstSlot.get(id)
    if (s === undefined) {
      lost.push(`${id} (not accepted)`)
      continue
    }
    while (s <= end) {
      due++
      const r = bySlot.get(s)
      if (r === undefined) {
        lost.push(`${id}@${s} (fixed-delay)`)
        break
      }
      const next = Number(r.finished_at) + o.periodMs
      if (r.next_run_at !== null && Number(r.next_run_at) !== next) {
        lost.push(
          `${id}@${s} (fixed-delay: next slot ${r.next_run_at}, not finish + period ${next})`,
        )
        break
      }
      s = next
    }
  }

  // ---------------------------------------------------------------- the effects logs
  const lines: Array<LogLine> = logs.flatMap((f) =>
    existsSync(f) ? parseLog(readFileSync(f, "utf8")) : [],
  )
  const byKey = new Map<string, Array<LogLine>>()
  for (const l of lines) {
    const key = `${l.id} ${l.slot} ${l.attempt}`
    const list = byKey.get(key) ?? []
    list.push(l)
    byKey.set(key, list)
  }
  /**
   * Whether fault `f` cut off the delivery `s` (a start line): it was in flight at some moment
   * of the fault, from its claim (`claimedAt`) to its commit (the worker's commit line for
   * that fence; none: it never committed).
   */
  const cutBy = (s: LogLine, list: ReadonlyArray<LogLine>, f: Fault) => {
    if (s.claimedAt > f.until) return false
    const commit = list.find(
      (l) => l.kind === "commit" && l.fence === s.fence && l.owner === s.owner,
    )
    return commit === undefined || commit.at >= f.at
  }
  const duplicates: Array<Duplicate> = []
  for (const [key, list] of byKey) {
    const starts = list.filter((l) => l.kind === "start").sort((x, y) => x.at - y.at)
    if (starts.length < 2) continue
    // Every delivery but the last was cut off by a fault.
    let fault: string | undefined
    for (const s of starts.slice(0, -1)) {
      const f = faults.find(
        (f) =>
          f.kind !== "disk-full" && (f.owner === "*" || f.owner === s.owner) && cutBy(s, list, f),
      )
      if (f === undefined) {
        fault = undefined
        break
      }
      fault = `${f.kind} ${f.owner} at +${f.at - started} ms`
    }
    duplicates.push({
      key,
      starts: starts.length,
      fault,
      trace: list
        .map(
          (l) =>
            `${l.kind} ${l.owner} f${l.fence} +${l.at - started}` +
            (l.kind === "start" && Number.isFinite(l.claimedAt)
              ? ` (claimed +${l.claimedAt - started})`
              : ""),
        )
        .join(", "),
    })
  }
  const beyondInFlight = duplicates.filter((d) => d.fault === undefined)

  // One-shots' lateness (first start − slot): how loaded the machine was.
  const slotOf = new Map(
    oneShotIds.map((id, k) => [id, base + Math.floor((k * o.durationMs) / o.oneShots)]),
  )
  const lateness = lines
    .filter((l) => l.kind === "start" && l.delivery === 1 && slotOf.has(l.id))
    .map((l) => l.at - (slotOf.get(l.id) as number))
    .sort((x, y) => x - y)

  // ---------------------------------------------------------------- failover per kill
  const failover: Array<number> = []
  const perKill: Array<{ owner: string; at: number; cut: number; max: number }> = []
  let notRestarted = 0
  for (const f of faults) {
    if (f.kind !== "kill") continue
    let cutHere = 0
    const times: Array<number> = []
    for (const [, list] of byKey) {
      // A run the kill cut off: started by the killed process, never ended nor interrupted.
      const cut = list.find(
        (l) =>
          l.kind === "start" &&
          l.owner === f.owner &&
          l.at <= f.at &&
          !list.some((e) => e.kind !== "start" && e.owner === l.owner && e.fence === l.fence),
      )
      if (cut === undefined) continue
      // Already taken over before the kill (its process was stopped past the lease): the
      // kill cut off nothing there; that earlier fault's duplicate is counted against it.
      if (list.some((l) => l.kind === "start" && l.fence > cut.fence && l.at <= f.at)) continue
      cutHere++
      const next = list
        .filter((l) => l.kind === "start" && l.owner !== f.owner && l.at >= f.at)
        .sort((x, y) => x.at - y.at)[0]
      if (next === undefined) notRestarted++
      else times.push(next.at - f.at)
    }
    failover.push(...times)
    perKill.push({
      owner: f.owner,
      at: f.at - started,
      cut: cutHere,
      max: Math.max(-1, ...times),
    })
  }
  failover.sort((x, y) => x - y)
  return {
    tasks: o.oneShots + 2 * o.recurring,
    due,
    runs: runs.length,
    lost,
    duplicates,
    beyondInFlight,
    faults,
    failover,
    notRestarted,
    perKill,
    lateness: { p50: percentile(lateness, 50), p99: percentile(lateness, 99) },
    seconds: (Date.now() - started) / 1000,
    started,
  }
}

/** The report as lines to print. */
export const describeReport = (r: ChaosReport, everyDuplicate = false): Array<string> => {
  const count = (kind: Fault["kind"]) => r.faults.filter((f) => f.kind === kind).length
  const p = (q: number) => percentile(r.failover, q)
  return [
    `chaos: ${r.tasks} tasks, ${r.due} due (task, slot)s, ${r.runs} runs in the ledger, in ${r.seconds.toFixed(1)} s`,
    `chaos: one-shot lateness (first start − slot) p50 ${r.lateness.p50} ms, p99 ${r.lateness.p99} ms`,
    `chaos: faults: ${count("kill")} SIGKILL, ${count("stop")} SIGSTOP, ${count("terminate")} pg_terminate_backend, ${count("restart")} pg_ctl restart, ${count("disk-full")} disk full`,
    ...r.faults.map(
      (f) =>
        `  ${f.kind} ${f.owner} at +${f.at - r.started} ms for ${f.until - f.at} ms: ${f.detail}`,
    ),
    `chaos: failover per killed run (${r.failover.length} runs): p50 ${p(50)} ms, p99 ${p(99)} ms, max ${r.failover[r.failover.length - 1] ?? Number.NaN} ms; not restarted ${r.notRestarted}`,
    ...r.perKill.map((k) =>
      k.cut === 0
        ? `  kill ${k.owner} at +${k.at} ms: no run in flight`
        : `  kill ${k.owner} at +${k.at} ms: ${k.cut} run(s) cut off, all restarted within ${k.max} ms`,
    ),
    `chaos: lost ${r.lost.length}, duplicates ${r.duplicates.length}, beyond in-flight ${r.beyondInFlight.length}`,
    ...r.beyondInFlight.map((d) => `  NO FAULT: ${d.key} ×${d.starts} (${d.trace})`),
    ...(r.storeEvents ?? []).map((e) => `  store event of an unexplained duplicate: ${e}`),
    ...r.duplicates
      .filter((d) => d.fault !== undefined)
      .slice(0, everyDuplicate ? undefined : 30)
      .map((d) => `  duplicate ${d.key} ×${d.starts}: ${d.fault} (${d.trace})`),
    ...(!everyDuplicate && r.duplicates.length > 30
      ? [`  … and the rest of the ${r.duplicates.length}`]
      : []),
    ...r.lost.slice(0, 20).map((l) => `  LOST ${l}`),
  ]
}
