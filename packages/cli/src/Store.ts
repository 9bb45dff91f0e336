/**
 * The store commands: `tasks`, `status`, `ledger`, `pause`, `resume`, `trigger`, `retry`, `cancel` and `stats`, over
 * a durable store named by `--store` (a SQLite file path or a `postgres://` URL). They open the
 * store with `@tickwork/durable`'s `StoreAdmin`, which runs no scheduler: nothing is claimed or
 * run, and the controls are the scheduler's own (the core's rules over the row, in one
 * transaction, under the row's fence).
 *
 * The module has two layers: pure renderers of `StoreAdmin`'s answers as text tables
 * ({@link tasksTable}, {@link statusText}, {@link ledgerTable}, {@link controlText},
 * {@link statsText}), and the commands that parse flags, open the store and print. Bad input
 * (an unknown id, a bad `--state` or `--limit`, a store that cannot be used) is the durable
 * package's typed error, whose message names the field and the value: the command shows it on
 * stderr and exits with code 1, having changed nothing.
 *
 * @since 0.1.0
 */

import { Errors, Schedule } from "@tickwork/core"
import { type DurableScheduler, StoreAdmin } from "@tickwork/durable"
import { Config, Console, Effect, Option } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import * as Cells from "./internal/cells.ts"
import { lastFailureText, late } from "./internal/cells.ts"
import { printable, printableJson } from "./internal/printable.ts"
import * as Slot from "./internal/slot.ts"
import { type Listed, stateText, waitingText } from "./internal/waiting.ts"

// ------------------------------------------------------------------------------ rendering

/**
 * An instant as `2026-12-01T09:00:00Z` (milliseconds shown only when not zero); `-` for none.
 *
 * @category getters
 * @since 0.1.0
 */
export const instant = Cells.instant

/** `250ms`, `12s`, `5m`, `1h30m`, `2d`. */
const duration = (ms: number): string => {
  if (ms < 1_000 || ms % 1_000 !== 0) return `${ms}ms`
  const s = ms / 1_000
  if (s < 60 || s % 60 !== 0) return `${s}s`
  const m = s / 60
  if (m < 60 || m % 60 !== 0) return `${m}m`
  const h = m / 60
  return h < 24 || h % 24 !== 0 ? `${h}h` : `${h / 24}d`
}

/**
 * A schedule in a few words: `cron "0 9 * * *" Europe/Berlin`, `every 1m`, `every 1m after end`,
 * `once`. A cron schedule read with `dayMatch: "either"` ends with `, either day field`.
 *
 * @category getters
 * @since 0.1.0
 */
export const scheduleText = (schedule: DurableScheduler.DurableTaskInfo["schedule"]): string => {
  switch (schedule.kind) {
    case "cron":
      return `cron "${schedule.expression}" ${schedule.timeZone}${
        schedule.dayMatch === "either" ? ", either day field" : ""
      }`
    case "fixed-rate":
      return `every ${duration(schedule.period)}`
    case "fixed-delay":
      return `every ${duration(schedule.period)} after end`
    case "once":
      return "once"
  }
}

/**
 * What a cron schedule means, in core's words (`Schedule.explain`): `at 02:00`, `at 09:00 on the
 * last Friday of the month`. `undefined` for any other kind, and for a stored expression that
 * no longer parses (a row edited by hand: the store's reader rejects it before this is asked).
 *
 * **Example** (A nightly cron)
 *
 * ```ts
 * import { Store } from "@tickwork/cli"
 * Store.scheduleWords({ kind: "cron", expression: "0 2 * * *", timeZone: "Europe/Berlin" }) // "at 02:00"
 * ```
 *
 * @category getters
 * @since 0.4.0
 */
export const scheduleWords = (
  schedule: DurableScheduler.DurableTaskInfo["schedule"],
): string | undefined => {
  if (schedule.kind !== "cron") return undefined
  const words = Schedule.explain(schedule.expression, schedule.timeZone, {
    dayMatch: schedule.dayMatch,
  })
  return "text" in words ? words.text : undefined
}

/**
 * Rows as a table: columns padded to their widest cell, two spaces apart, no trailing blanks.
 * A control character in a cell (a stored id or error may hold one) is shown as an escape,
 * `\x1b`, never sent to the terminal.
 *
 * **Example** (Two columns)
 *
 * ```ts
 * import { Store } from "@tickwork/cli"
 * Store.table([["ID", "STATE"], ["a", "scheduled"]]) // "ID  STATE\na   scheduled"
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const table = (given: ReadonlyArray<ReadonlyArray<string>>): string => {
  const rows = given.map((row) => row.map((cell) => printable(cell)))
  const widths: Array<number> = []
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length)
    })
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
}

/**
 * A page of tasks as a table: id, state (with the cause of a wait on a limit, when the store
 * reports one: SPEC §20.4), handler, schedule, when it is due (live) or ended (final), runs,
 * lease owner, and tags; then how many matched.
 *
 * @category getters
 * @since 0.1.0
 */
export const tasksTable = (page: Listed<StoreAdmin.TaskPage>): string => {
  if (page.tasks.length === 0) return "no tasks match"
  const live = (s: string) => s === "scheduled" || s === "running" || s === "paused"
  const rows = [
    ["ID", "STATE", "HANDLER", "SCHEDULE", "DUE / ENDED", "RUNS", "OWNER", "TAGS"],
    ...page.tasks.map((t) => [
      t.id,
      stateText(t),
      t.handler,
      scheduleText(t.schedule),
      instant(live(t.state) ? t.scheduledFor : t.finishedAt),
      String(t.runNumber),
      t.leaseOwner ?? "-",
      t.tags.length === 0 ? "-" : t.tags.join(","),
    ]),
  ]
  const footer =
    page.total > page.tasks.length
      ? `${page.tasks.length} of ${page.total} tasks (--limit ${page.limit})`
      : `${page.total} task${page.total === 1 ? "" : "s"}`
  return `${table(rows)}\n${footer}`
}

/**
 * One task as `field  value` lines; a cron task also gets an `in words` line, and a task waiting
 * on a limit a `waiting` line (`concurrency on group:email since …`; SPEC §20.4) when its store
 * reports the wait.
 *
 * @category getters
 * @since 0.1.0
 */
export const statusText = (t: Listed<StoreAdmin.TaskDetails>): string => {
  const words = scheduleWords(t.schedule)
  const waiting = waitingText(t.waiting)
  return table([
    ["id", t.id],
    ["state", stateText(t)],
    ...(waiting === undefined ? [] : [["waiting", waiting]]),
    ["handler", t.handler],
    ["schedule", scheduleText(t.schedule)],
    ...(words === undefined ? [] : [["in words", words]]),
    ["priority", t.priority],
    ["missed runs", t.missedRuns],
    ["slot", instant(t.slot)],
    ["due", instant(t.scheduledFor)],
    ["attempt", String(t.attempt)],
    ["runs", String(t.runNumber)],
    ["failures in a row", String(t.consecutiveFailures)],
    ["lease owner", t.leaseOwner ?? "-"],
    ["lease until", instant(t.leaseExpiresAt)],
    ["tags", t.tags.length === 0 ? "-" : t.tags.join(", ")],
    ["generation", String(t.generation)],
    ["created", instant(t.createdAt)],
    ["updated", instant(t.updatedAt)],
    ["finished", instant(t.finishedAt)],
    ["last failure", lastFailureText(t)],
    ["payload", JSON.stringify(t.payload)],
    ...(t.lastResult === undefined
      ? []
      : t.lastResult.json !== null
        ? [["last result", shortResult(t.lastResult.json, STATUS_RESULT_CHARS)]]
        : [["last result", `not kept: ${t.lastResult.error ?? "-"}`]]),
  ])
}

/** How much of a kept result `status` shows, and a ledger row; `--json` shows all of it. */
const STATUS_RESULT_CHARS = 400
const LEDGER_RESULT_CHARS = 80

/**
 * A kept result's JSON text (SPEC §19.3), cut to `max` characters with its full size said, so
 * a 64 KiB result does not flood the terminal; escaped like every cell by {@link table}.
 */
const shortResult = (json: string, max: number): string =>
  json.length <= max ? json : `${json.slice(0, max)}… (${json.length} characters; --json shows all)`

/** A run's detail cell: its error or where it went next, then its kept result, if any. */
const ranDetail = (o: DurableScheduler.Ran): string => {
  const base = o.error ?? (o.nextRunAt === null ? `-> ${o.state}` : `next ${instant(o.nextRunAt)}`)
  if (typeof o.result === "string") {
    return `${base}; result ${shortResult(o.result, LEDGER_RESULT_CHARS)}`
  }
  if (typeof o.resultError === "string") return `${base}; result not kept: ${o.resultError}`
  return base
}

/**
 * An event's stored detail with its instants as ISO 8601 UTC, like every other time in the
 * table. Details are free text written by the durable scheduler (stores keep what older versions
 * wrote too), and name instants as epoch ms (`resumed at slot 1796191200000`, `due at …`,
 * `half-open at …`). An epoch-ms instant from 1973 to 2286 has 12 or 13 digits, and no count or
 * duration in a detail comes near that; a number followed by ` ms` is a duration and kept.
 */
const detailText = (detail: string): string =>
  detail.replace(/\b(\d{12,13})\b(?! ?ms\b)/g, (digits) => instant(Number(digits)))

const slots = (first: number, last: number, count: number): string =>
  count === 1 ? instant(first) : `${instant(first)} .. ${instant(last)} (${count})`

/**
 * A ledger as a table, oldest first: when, what (a run's outcome, or the event's kind and the
 * tool that asked for it, `paused by cli`), the slot(s), the attempt, lateness (`manual` for a
 * manual run, which counts none), owner, and the
 * cause or error (a run's kept result after it, cut to 80 characters: SPEC §19.3).
 *
 * @category getters
 * @since 0.1.0
 */
export const ledgerTable = (
  ledger: ReadonlyArray<DurableScheduler.DurableOccurrence>,
  options: { readonly withTask?: boolean } = {},
): string => {
  if (ledger.length === 0) return "no runs or events recorded"
  const withTask = options.withTask === true
  const rows = [
    ["AT", ...(withTask ? ["TASK"] : []), "WHAT", "SLOT", "ATTEMPT", "LATE", "OWNER", "DETAIL"],
    ...ledger.map((o) =>
      o.kind === "ran"
        ? [
            instant(o.finishedAt),
            ...(withTask ? [o.taskId] : []),
            `ran: ${o.outcome}`,
            instant(o.slot),
            String(o.attempt),
            late(o),
            o.owner,
            ranDetail(o),
          ]
        : [
            instant(o.at),
            ...(withTask ? [o.taskId] : []),
            o.origin === undefined ? o.kind : `${o.kind} by ${o.origin}`,
            slots(o.firstSlot, o.lastSlot, o.count),
            "-",
            "-",
            o.owner ?? "-",
            [o.cause, o.detail === null ? null : detailText(o.detail)]
              .filter((x) => x !== null)
              .join(": ") || "-",
          ],
    ),
  ]
  return table(rows)
}

/**
 * What a control did, in a sentence: `paused "sync-crm"` or `"x" was not resumed: it is done`.
 *
 * @category getters
 * @since 0.1.0
 */
export const controlText = (
  operation: "pause" | "resume" | "cancel" | "retry" | "trigger",
  r: StoreAdmin.ControlResult,
  slot?: number,
): string => {
  // SPEC §19.7: a retry of one slot says which, and core's reason when it was refused.
  if (operation === "retry" && slot !== undefined) {
    const at = new Date(slot).toISOString()
    return r.changed
      ? `retried slot ${at} of ${Errors.show(r.id)}: it runs again now; its next run stays as it was`
      : `not retried: ${r.refused ?? `it is ${stateText(r)}`}`
  }
  const past = {
    pause: "paused",
    resume: "resumed",
    cancel: "cancelled",
    retry: "retried",
    trigger: "triggered",
  }[operation]
  const id = Errors.show(r.id)
  if (!r.changed) {
    // A failed task is not resumed but retried (SPEC §19.2): say so, and say why a retry is not.
    if (operation === "resume" && r.state === "failed")
      return `${id} was not resumed: it is failed; to run it again: tickwork retry ${id}`
    if (operation === "retry")
      return `${id} was not retried: it is ${stateText(r)}; only a failed task can be retried`
    // SPEC §19.4: only a scheduled task with no manual run waiting is triggered.
    if (operation === "trigger")
      return r.state === "scheduled"
        ? `${id} was not triggered: a manual run of it is already waiting to start`
        : `${id} was not triggered: it is ${stateText(r)}; only a scheduled task can be triggered`
    return `${id} was not ${past}: it is ${stateText(r)}`
  }
  if (operation === "retry") return `retried ${id}: its failed slot runs again now`
  if (operation === "trigger")
    return `triggered ${id}: it runs once now; its next run stays as it was`
  return r.state === "running"
    ? `${past} ${id}: its run goes on; ${operation === "pause" ? "it is paused when the run ends" : operation === "resume" ? "the pause asked for is withdrawn" : "it never runs again"}`
    : `${past} ${id} (now ${stateText(r)})`
}

/**
 * The store's figures: tasks by state, overdue tasks, lateness, and the processes seen.
 *
 * @category getters
 * @since 0.1.0
 */
export const statsText = (s: StoreAdmin.StoreStats): string => {
  const states = Object.entries(s.tasks)
    .map(([state, n]) => `${n} ${state}`)
    .join(", ")
  const ms = (v: number | null) => (v === null ? "-" : `${v}ms`)
  const head = table([
    ["store", `${s.store} ${s.target}`],
    ["at", instant(s.at)],
    ["tasks", `${s.total}: ${states}`],
    ["overdue", s.overdue === 0 ? "0" : `${s.overdue} (due since ${instant(s.oldestDueAt)})`],
    [
      "lateness",
      s.lateness.runs === 0
        ? "no runs yet"
        : `p50 ${ms(s.lateness.p50)}  p90 ${ms(s.lateness.p90)}  p99 ${ms(s.lateness.p99)}  max ${ms(s.lateness.max)}  (last ${s.lateness.runs} runs)`,
    ],
    [
      "health",
      s.health.status === "ok"
        ? "ok"
        : `${s.health.status}: ${s.health.reasons.map((r) => `${r.code} (${r.message})`).join("; ")}`,
    ],
  ])
  const owners =
    s.owners.length === 0
      ? `no process holds a lease or ran a task in the last ${duration(s.window)}`
      : table([
          ["OWNER", "RUNNING", "LEASE UNTIL", `RUNS (${duration(s.window)})`, "LAST RUN ENDED"],
          ...s.owners.map((o) => [
            o.owner,
            String(o.running),
            instant(o.leaseExpiresAt),
            String(o.completed),
            instant(o.lastFinishedAt),
          ]),
        ])
  return `${head}\n\n${owners}`
}

// ------------------------------------------------------------------------------ commands

/**
 * Parses `--limit`: a whole number from 1 to `StoreAdmin.MAX_LIMIT`, in decimal digits.
 * Anything else is an `InvalidOption` naming `limit` and the text as given.
 *
 * **Example** (Valid and invalid limits)
 *
 * ```ts
 * import { Store } from "@tickwork/cli"
 * Store.parseLimit("20") // 20
 * Store.parseLimit("ten") // InvalidOption: limit must be a whole number from 1 to 10000, got "ten"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const parseLimit = (text: string): number | Errors.InvalidOption => {
  const n = /^[0-9]+$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(n) && n >= 1 && n <= StoreAdmin.MAX_LIMIT
    ? n
    : new Errors.InvalidOption({
        field: "limit",
        value: text,
        message: `limit must be a whole number from 1 to ${StoreAdmin.MAX_LIMIT}, got ${Errors.show(text)}`,
      })
}

export { parseSlot } from "./internal/slot.ts"

/** Shows a typed error's message (it names the field and the value) and exits with code 1. */
const userError = (error: { readonly message: string }): CliError.UserError =>
  new CliError.UserError({ cause: error, userMessage: printable(error.message, true) })

/**
 * `--store <path|url>`, falling back to `TICKWORK_STORE`: shared by every command on a store.
 *
 * @category models
 * @since 0.1.0
 */
export const storeFlag = Flag.String("store").pipe(
  Flag.withMetavar("path|url"),
  Flag.withDescription(
    'The durable store: a SQLite file path ("./tasks.db") or a PostgreSQL URL ("postgres://user@host/db"); default: the TICKWORK_STORE environment variable',
  ),
  Flag.withFallbackConfig(Config.String("TICKWORK_STORE")),
)

const jsonFlag = Flag.Boolean("json").pipe(
  Flag.withDescription("Print JSON instead of a table"),
  Flag.withDefault(false),
)

const idArgument = Argument.String("id").pipe(Argument.withDescription("The task's id"))

/** Prints `--json` or the text; neither lets a stored control character reach the terminal. */
const print = (json: boolean, value: unknown, text: () => string) =>
  Console.log(json ? printableJson(JSON.stringify(value, null, 2)) : printable(text(), true))

/**
 * Opens the store (read-only unless `write`), runs `body`, closes it; any failure becomes the
 * user error the CLI prints.
 */
const withStore = <A, E extends { readonly message: string }>(
  store: string,
  write: boolean,
  body: (admin: StoreAdmin.StoreAdminShape) => Effect.Effect<A, E>,
) =>
  Effect.scoped(
    Effect.flatMap(StoreAdmin.open(store, { readOnly: !write }), (admin) => body(admin)),
  ).pipe(Effect.mapError(userError))

/**
 * `tasks --store <s> [--state <state>] [--handler <name>] [--tag <tag>] [--limit <n>] [--json]`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const tasks = Command.make(
  "tasks",
  {
    store: storeFlag,
    state: Flag.String("state").pipe(
      Flag.withMetavar("state"),
      Flag.withDescription(
        "Only tasks in this state: scheduled, running, paused, done, failed or cancelled",
      ),
      Flag.optional,
    ),
    handler: Flag.String("handler").pipe(
      Flag.withMetavar("name"),
      Flag.withDescription("Only tasks of this handler"),
      Flag.optional,
    ),
    tag: Flag.String("tag").pipe(
      Flag.withMetavar("tag"),
      Flag.withDescription("Only tasks carrying this tag (stores whose tasks keep tags)"),
      Flag.optional,
    ),
    limit: Flag.String("limit").pipe(
      Flag.withMetavar("n"),
      Flag.withDescription(
        `List at most this many, 1 to ${StoreAdmin.MAX_LIMIT} (default: ${StoreAdmin.DEFAULT_LIMIT})`,
      ),
      Flag.withDefault(String(StoreAdmin.DEFAULT_LIMIT)),
    ),
    json: jsonFlag,
  },
  (input) =>
    Effect.gen(function* () {
      const limit = parseLimit(input.limit)
      if (typeof limit !== "number") return yield* userError(limit)
      const page = yield* withStore(input.store, false, (admin) =>
        admin.tasks({
          state: Option.getOrUndefined(input.state),
          handler: Option.getOrUndefined(input.handler),
          tag: Option.getOrUndefined(input.tag),
          limit,
        }),
      )
      yield* print(input.json, page, () => tasksTable(page))
    }),
).pipe(
  Command.withDescription(
    "List the store's tasks: live ones in due order, then finished ones, latest first.",
  ),
)

/**
 * `status <id> --store <s> [--json]`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const status = Command.make(
  "status",
  { store: storeFlag, id: idArgument, json: jsonFlag },
  (input) =>
    Effect.gen(function* () {
      const info = yield* withStore(input.store, false, (admin) => admin.info(input.id))
      yield* print(input.json, info, () => statusText(info))
    }),
).pipe(Command.withDescription("Show one task: its state, schedule, due time, lease and counters."))

/**
 * How many of a task's latest ledger entries `ledger` shows when no `--limit` is given.
 *
 * @category models
 * @since 0.1.0
 */
export const LEDGER_LIMIT = 100

/**
 * `ledger <id> --store <s> [--limit <n>] [--json]`: the latest entries, oldest first.
 *
 * @category constructors
 * @since 0.1.0
 */
export const ledger = Command.make(
  "ledger",
  {
    store: storeFlag,
    id: idArgument,
    limit: Flag.String("limit").pipe(
      Flag.withMetavar("n"),
      Flag.withDescription(
        `Show the latest n entries, 1 to ${StoreAdmin.MAX_LIMIT} (default: ${LEDGER_LIMIT})`,
      ),
      Flag.withDefault(String(LEDGER_LIMIT)),
    ),
    json: jsonFlag,
  },
  (input) =>
    Effect.gen(function* () {
      const limit = parseLimit(input.limit)
      if (typeof limit !== "number") return yield* userError(limit)
      const entries = yield* withStore(input.store, false, (admin) => admin.ledger(input.id, limit))
      yield* print(input.json, entries, () =>
        entries.length < limit
          ? ledgerTable(entries)
          : `${ledgerTable(entries)}\nthe latest ${limit} entries (--limit to see more)`,
      )
    }),
).pipe(
  Command.withDescription(
    "Show a task's latest ledger entries, oldest first: its runs and events (skipped, paused, cancelled, …).",
  ),
)

const control = (
  operation: "pause" | "resume" | "cancel" | "retry" | "trigger",
  description: string,
) =>
  Command.make(operation, { store: storeFlag, id: idArgument, json: jsonFlag }, (input) =>
    Effect.gen(function* () {
      const result = yield* withStore(input.store, true, (admin) =>
        admin[operation](input.id, { origin: "cli" }),
      )
      yield* print(input.json, result, () => controlText(operation, result))
    }),
  ).pipe(Command.withDescription(description))

/**
 * `pause <id> --store <s> [--json]`: the scheduler's pause (SPEC §15), stored; workers run
 * nothing of the task until it is resumed.
 *
 * @category constructors
 * @since 0.1.0
 */
export const pause = control(
  "pause",
  "Pause a task: a scheduled one at once, a running one when its run ends. Workers start no run of it until it is resumed.",
)

/**
 * `resume <id> --store <s> [--json]`: the scheduler's resume; the slots that passed while
 * paused are recorded as skipped.
 *
 * @category constructors
 * @since 0.1.0
 */
export const resume = control(
  "resume",
  "Resume a paused task at its next slot; the slots that passed while it was paused are recorded as skipped.",
)

/**
 * `cancel <id> --store <s> [--json]`: the scheduler's cancel; a running run finishes.
 *
 * @category constructors
 * @since 0.1.0
 */
export const cancel = control(
  "cancel",
  "Cancel a task: it never runs again (a run in progress finishes and is recorded).",
)

/**
 * `retry <id> --store <s> [--json]`: the scheduler's retry (SPEC §19.2): a failed task runs one
 * more attempt of its failed slot, now, claimed by whichever worker of the fleet is free.
 *
 * @category constructors
 * @since 0.4.0
 */
export const retry = Command.make(
  "retry",
  {
    store: storeFlag,
    id: idArgument,
    json: jsonFlag,
    slot: Flag.String("slot").pipe(
      Flag.withMetavar("instant"),
      Flag.withDescription(
        "Retry this failed slot of a scheduled recurring task instead (epoch ms, or ISO 8601 with its offset): one more attempt now, its next run kept",
      ),
      Flag.optional,
    ),
  },
  (input) =>
    Effect.gen(function* () {
      const text = Option.getOrUndefined(input.slot)
      const slot = text === undefined ? undefined : Slot.parseSlot(text)
      if (slot !== undefined && typeof slot !== "number") return yield* userError(slot)
      const result = yield* withStore(input.store, true, (admin) =>
        admin.retry(input.id, { origin: "cli", slot }),
      )
      yield* print(input.json, result, () => controlText("retry", result, slot))
    }),
).pipe(
  Command.withDescription(
    "Retry a failed task: one more attempt of the slot it failed on, due now (any worker may claim it). With --slot, one failed slot of a scheduled recurring task. Anything else is left as it is.",
  ),
)

/**
 * `trigger <id> --store <s> [--json]`: the scheduler's trigger (SPEC §19.1): a scheduled task
 * runs once now, claimed by whichever worker of the fleet is free; its next run stays as it was.
 *
 * @category constructors
 * @since 0.5.0
 */
export const trigger = control(
  "trigger",
  "Run a scheduled task once now (any worker may claim it); its next run, slot and attempt stay as they were. A task that is not scheduled is left as it is.",
)

/**
 * `stats --store <s> [--json]`.
 *
 * @category constructors
 * @since 0.1.0
 */
export const stats = Command.make("stats", { store: storeFlag, json: jsonFlag }, (input) =>
  Effect.gen(function* () {
    const s = yield* withStore(input.store, false, (admin) => admin.stats)
    yield* print(input.json, s, () => statsText(s))
  }),
).pipe(
  Command.withDescription(
    "Show the store's figures: tasks by state, overdue tasks, lateness of the latest runs, and the processes holding leases or running tasks.",
  ),
)

/**
 * The store commands, in the order help lists them.
 *
 * @category models
 * @since 0.1.0
 */
export const commands = [
  tasks,
  status,
  ledger,
  pause,
  resume,
  trigger,
  retry,
  cancel,
  stats,
] as const
