/**
 * `tickwork dashboard`: a durable store's tasks by state, lease owners and recent runners, the
 * recent ledger of the whole store and lateness, on a local web page served with Effect's HTTP
 * server (`NodeHttpServer`). The page polls `/api/snapshot` once a second.
 *
 * **Read-only by default.** The store is opened with `StoreAdmin.open(store, { readOnly: true })`
 * (a read-only SQLite connection; PostgreSQL sessions with `default_transaction_read_only`), and
 * the server answers GET and HEAD only: anything else is 405.
 *
 * **Actions** (`--allow-actions`): the store is opened writable and `POST /api/pause`,
 * `/api/resume`, `/api/trigger` (a scheduled task runs once now, SPEC §19.1), `/api/retry` (a
 * failed task, SPEC §19.2; with `"slot"`, one failed slot of a recurring task, SPEC §19.7) and
 * `/api/cancel` (body `{"id": "…"}`, and for retry an optional `"slot"`: epoch ms, or ISO 8601
 * with its offset) run `StoreAdmin`'s controls with origin `dashboard`, which the ledger keeps;
 * a retry or trigger that changed nothing answers with core's reason as `refused`. Each needs the dashboard's token in the
 * `X-Tickwork-Token` header: `TICKWORK_DASHBOARD_TOKEN` when set, else a random one printed at
 * start.
 *
 * **Other websites.** Every request's `Host` must name an address the server serves (else 421):
 * a DNS-rebinding page, whose requests carry its own host name, reads nothing. A POST must carry
 * an `Origin` naming one of those addresses too (else 403), so another site cannot submit one;
 * its token is a custom header, which no cross-site form can set. Bound beyond loopback
 * (`--host 0.0.0.0`), every `/api` route needs the token, reads included; the page itself holds
 * no data.
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import { createServer } from "node:http"
import { isAbsolute, resolve } from "node:path"
// A submodule, not the index, which loads NodeRedis and so the `redis` peer (see bin.ts).
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Errors, Task } from "@tickwork/core"
import { type Errors as DurableErrors, type DurableScheduler, StoreAdmin } from "@tickwork/durable"
import { PageAccess } from "@tickwork/runtime"
import { Clock, Config, Console, Effect, Option, type Scope } from "effect"
import { CliError, Command, Flag } from "effect/cli"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { ServeError } from "effect/http/HttpServerError"
import { html as page } from "./DashboardPage.ts"
import { printable } from "./internal/printable.ts"
import * as Slot from "./internal/slot.ts"
import { scheduleWords, storeFlag } from "./Store.ts"

/**
 * The port the dashboard listens on when `--port` is not given.
 *
 * @category models
 * @since 0.1.0
 */
export const DEFAULT_PORT = 4478

/**
 * The environment variable whose value, when set, is the dashboard's token (at least
 * {@link MIN_TOKEN_LENGTH} characters); otherwise a random token is made and printed.
 *
 * @category models
 * @since 0.1.0
 */
export const TOKEN_ENV = "TICKWORK_DASHBOARD_TOKEN"

/**
 * The shortest token accepted from {@link TOKEN_ENV}.
 *
 * @category models
 * @since 0.1.0
 */
export const MIN_TOKEN_LENGTH: number = PageAccess.MIN_TOKEN_LENGTH

/**
 * The request header that carries the token.
 *
 * @category models
 * @since 0.1.0
 */
export const TOKEN_HEADER = "x-tickwork-token"

/**
 * The origin the dashboard's controls record on their ledger events.
 *
 * @category models
 * @since 0.1.0
 */
export const ORIGIN = "dashboard"

/**
 * How many tasks the snapshot lists (live ones first, in due order).
 *
 * @category models
 * @since 0.1.0
 */
export const TASKS_SHOWN = 500

/**
 * How many of the store's latest runs and events the snapshot carries.
 *
 * @category models
 * @since 0.1.0
 */
export const LEDGER_SHOWN = 80

/**
 * A task as the page lists it: its details and, for a cron task, what its expression means in
 * words (core's `Schedule.explain`, computed here so the page needs no cron parser).
 *
 * @category models
 * @since 0.4.0
 */
export interface ShownTask extends StoreAdmin.TaskDetails {
  /** `at 02:00`, `at 09:00 on the last Friday of the month`; `null` for other kinds. */
  readonly scheduleWords: string | null
}

/**
 * What `/api/snapshot` returns.
 *
 * @category models
 * @since 0.1.0
 */
export interface Snapshot {
  /** When it was read, epoch ms. */
  readonly at: number
  readonly store: "sqlite" | "postgres"
  /** The file, or `host:port/database` (never a password). */
  readonly target: string
  readonly readOnly: boolean
  /** Whether the page may offer pause, resume, trigger, retry and cancel (`--allow-actions`). */
  readonly actions: boolean
  readonly stats: StoreAdmin.StoreStats
  readonly tasks: Omit<StoreAdmin.TaskPage, "tasks"> & { readonly tasks: ReadonlyArray<ShownTask> }
  /**
   * The latest runs and events of the whole store, newest first; a run's kept result cut to
   * {@link RESULT_SHOWN} characters.
   */
  readonly recent: ReadonlyArray<ShownOccurrence>
}

/**
 * A ledger entry as the page shows it: a run carries `late`, its lateness from its due time in
 * ms, or `null` for a manual run (SPEC §19.1), which counts none and is shown as `manual` (core's
 * `Task.countedLateness`, computed here so the page decides nothing).
 *
 * @category models
 * @since 0.7.0
 */
export type ShownOccurrence = DurableScheduler.DurableOccurrence & {
  readonly late?: number | null
}

/** How much of a run's kept result the page shows (`tickwork ledger --json` gives all of it). */
export const RESULT_SHOWN = 200

/**
 * A run whose kept result (SPEC §19.3, up to `maxResultBytes` of JSON) is cut to
 * {@link RESULT_SHOWN} characters and `…`: a page of recent runs stays small to poll.
 */
const cutResult = (o: DurableScheduler.DurableOccurrence): DurableScheduler.DurableOccurrence =>
  o.kind === "ran" && typeof o.result === "string" && o.result.length > RESULT_SHOWN
    ? { ...o, result: `${o.result.slice(0, RESULT_SHOWN)}…` }
    : o

/** A run with its `late` cell (see {@link ShownOccurrence}); an event as it is. */
const withLate = (o: DurableScheduler.DurableOccurrence): ShownOccurrence =>
  o.kind === "ran"
    ? {
        ...o,
        late:
          Task.countedLateness(
            { scheduledFor: o.runAt, startedAt: o.startedAt, manual: o.manual },
            Number.NEGATIVE_INFINITY,
          ) ?? null,
      }
    : o

/**
 * The store as the page shows it.
 *
 * @category getters
 * @since 0.1.0
 */
export const snapshot = (
  admin: StoreAdmin.StoreAdminShape,
  actions: boolean,
): Effect.Effect<Snapshot, DurableErrors.StoreError | Errors.InvalidOption> =>
  Effect.gen(function* () {
    const [stats, tasks, recent] = yield* Effect.all([
      admin.stats,
      admin.tasks({ limit: TASKS_SHOWN }),
      admin.recent(LEDGER_SHOWN),
    ])
    return {
      at: yield* Clock.currentTimeMillis,
      store: admin.store,
      target: admin.target,
      readOnly: admin.readOnly,
      actions,
      stats,
      tasks: {
        ...tasks,
        tasks: tasks.tasks.map((t) => ({ ...t, scheduleWords: scheduleWords(t.schedule) ?? null })),
      },
      recent: recent.map((o) => withLate(cutResult(o))),
    } satisfies Snapshot
  })

/**
 * Parses `--port`: a whole number from 0 to 65535 in decimal digits (0: any free port). Anything
 * else is an `InvalidOption` naming `port` and the text as given.
 *
 * **Example** (Valid and invalid ports)
 *
 * ```ts
 * import { Dashboard } from "@tickwork/cli"
 * Dashboard.parsePort("0") // 0
 * Dashboard.parsePort("http") // InvalidOption: port must be a whole number from 0 to 65535, got "http"
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const parsePort = (text: string): number | Errors.InvalidOption => {
  const n = /^[0-9]{1,5}$/.test(text) ? Number(text) : Number.NaN
  return n >= 0 && n <= 65_535
    ? n
    : new Errors.InvalidOption({
        field: "port",
        value: text,
        message: `port must be a whole number from 0 to 65535, got ${Errors.show(text)}`,
      })
}

/**
 * A `--store` as `StoreAdmin.open` should see it: a `postgres://` URL as given, a relative file
 * path resolved against `base`, the directory the command runs in.
 *
 * @category getters
 * @since 0.1.0
 */
export const resolveStore = (store: string, base: string): string =>
  /^[a-z][a-z0-9+.-]*:\/\//i.test(store) || store === "" || isAbsolute(store)
    ? store
    : resolve(base, store)

/**
 * Whether `host` names this machine only (`127.0.0.0/8`, `::1`, `localhost`): then no other
 * machine can reach the server, and reading needs no token. The live view shares this rule
 * (`PageAccess.isLoopback` in `@tickwork/runtime`).
 *
 * @category getters
 * @since 0.1.0
 */
export const isLoopback: (host: string) => boolean = PageAccess.isLoopback

/**
 * The `Host` header values a request to the server may carry, lower case: the bound address
 * (every interface's address and this machine's name for a wildcard), and `localhost` with the
 * loopback addresses when those are served, each with `:port` (and bare too on port 80).
 *
 * @category getters
 * @since 0.1.0
 */
export const allowedHosts: (host: string, port: number) => ReadonlySet<string> =
  PageAccess.allowedHosts

/**
 * Checks a token taken from {@link TOKEN_ENV}: at least {@link MIN_TOKEN_LENGTH} characters,
 * printable ASCII (it travels in an HTTP header). Else an `InvalidOption` naming the variable.
 *
 * @category constructors
 * @since 0.1.0
 */
export const checkToken = (token: string): string | Errors.InvalidOption =>
  PageAccess.checkToken(TOKEN_ENV, token)

/**
 * How to serve the dashboard.
 *
 * @category models
 * @since 0.1.0
 */
export interface ServeOptions {
  /** A SQLite file path (absolute, or relative to the process's directory) or a `postgres://` URL. */
  readonly store: string
  /** 0: any free port. */
  readonly port: number
  /** The address to bind (default `127.0.0.1`). */
  readonly host?: string | undefined
  /** Open the store writable and serve the pause, resume, trigger, retry and cancel routes (default false). */
  readonly allowActions?: boolean | undefined
  /** The token; a random one when none is given and one is needed. */
  readonly token?: string | undefined
}

/**
 * A running dashboard.
 *
 * @category models
 * @since 0.1.0
 */
export interface Served {
  /** Where to open it. */
  readonly url: string
  /** The port listened on (the one chosen when 0 was asked for). */
  readonly port: number
  /** The token the actions (and, beyond loopback, the reads) need; `undefined` when none does. */
  readonly token: string | undefined
  readonly admin: StoreAdmin.StoreAdminShape
}

const CONTROLS = ["pause", "resume", "trigger", "retry", "cancel"] as const
type Control = (typeof CONTROLS)[number]

/**
 * The page's headers: only its own inline script runs (by hash), nothing may frame it (the
 * action buttons cannot be clickjacked), and it fetches from its own origin only.
 */
const pageHeaders = (() => {
  const script = page.slice(page.indexOf("<script>") + 8, page.indexOf("</script>"))
  const hash = createHash("sha256").update(script, "utf8").digest("base64")
  return {
    "content-security-policy": `default-src 'none'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  }
})()

const json = (body: unknown, status = 200) =>
  HttpServerResponse.jsonUnsafe(body, {
    status,
    headers: { "cache-control": "no-store", "x-content-type-options": "nosniff" },
  })

/** The HTTP status of a control's typed error. */
const statusOf = (error: { readonly _tag: string }): number =>
  error._tag === "UnknownTask"
    ? 404
    : error._tag === "InvalidOption" || error._tag === "InvalidTime"
      ? 400
      : error._tag === "ReadOnlyStore"
        ? 405
        : 503

/**
 * A control body's `slot` (SPEC §19.7): absent or `null` is none; for `retry`, epoch ms (a
 * number) or the text `tickwork retry --slot` takes (digits, or ISO 8601 with its offset), else
 * the `InvalidTime` naming `slot`; for any other control, the sentence saying it does not apply.
 */
const slotOf = (
  operation: Control,
  value: unknown,
): number | undefined | string | Errors.InvalidTime => {
  if (value === undefined || value === null) return undefined
  if (operation !== "retry") return `slot applies to retry only, not to ${operation}`
  return Slot.parseSlot(typeof value === "string" ? value : JSON.stringify(value))
}

/**
 * Opens `store` (read-only unless `allowActions`) and serves the dashboard on `host:port` until
 * the scope closes. Fails with the store's typed error (an `InvalidOption` naming `store`,
 * `StoreLocked`, `StoreUnavailable`) or `ServeError` when the address cannot be listened on.
 *
 * @category constructors
 * @since 0.1.0
 */
export const serve = (
  options: ServeOptions,
): Effect.Effect<
  Served,
  Errors.InvalidOption | DurableErrors.StoreLocked | DurableErrors.StoreUnavailable | ServeError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    const actions = options.allowActions === true
    const loopback = isLoopback(host)
    // A token exists whenever something needs one: an action, or any read beyond loopback.
    const token = actions || !loopback ? (options.token ?? PageAccess.newToken()) : undefined
    const admin = yield* StoreAdmin.open(options.store, { readOnly: !actions })
    const server = yield* NodeHttpServer.make(() => createServer(), {
      port: options.port,
      host: host.replace(/^\[|\]$/g, ""),
    })
    const address = server.address
    const port = address._tag === "UnixPathAddress" ? options.port : address.port
    const hosts = PageAccess.allowedHosts(host, port)
    const origins = PageAccess.allowedOrigins(hosts)

    const control = (operation: Control, request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function* () {
        const body = yield* Effect.option(request.json)
        const fields =
          Option.isSome(body) &&
          typeof body.value === "object" &&
          body.value !== null &&
          !Array.isArray(body.value)
            ? (body.value as { readonly id?: unknown; readonly slot?: unknown })
            : undefined
        const id = fields?.id
        if (typeof id !== "string") {
          return json({ error: 'the body must be JSON {"id": "<task id>"}' }, 400)
        }
        const slot = slotOf(operation, fields?.slot)
        if (typeof slot === "string") return json({ error: slot }, 400)
        if (slot instanceof Errors.InvalidTime) {
          return json({ error: slot.message, field: slot.field, value: slot.value }, 400)
        }
        const run =
          operation === "retry"
            ? admin.retry(id, { origin: ORIGIN, slot })
            : admin[operation](id, { origin: ORIGIN })
        return yield* run.pipe(
          Effect.map((result) => json(result)),
          Effect.catch((error) => Effect.succeed(json({ error: error.message }, statusOf(error)))),
        )
      })

    const app = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      // Checked before anything else: a page that rebound its own name to this address sends
      // that name, and must learn nothing, not even which routes exist.
      const hostHeader = (request.headers.host ?? "").toLowerCase()
      if (!PageAccess.hostAllowed(hosts, hostHeader)) {
        return HttpServerResponse.text(`unknown Host ${JSON.stringify(hostHeader)}\n`, {
          status: 421,
        })
      }
      const path = new URL(request.url, "http://localhost").pathname
      const operation = CONTROLS.find((c) => path === `/api/${c}`)
      const read = request.method === "GET" || request.method === "HEAD"
      if (!read && !(actions && request.method === "POST" && operation !== undefined)) {
        return HttpServerResponse.text(
          actions ? "only GET, HEAD, and POST to the actions\n" : "the dashboard is read-only\n",
          {
            status: 405,
            headers: { allow: actions && operation !== undefined ? "POST" : "GET, HEAD" },
          },
        )
      }
      if (read && (path === "/" || path === "/index.html")) {
        return HttpServerResponse.html(page).pipe(HttpServerResponse.setHeaders(pageHeaders))
      }
      if (!read) {
        // A browser always sends Origin on a POST: one naming another site, or none, is refused.
        if (!PageAccess.originAllowed(origins, request.headers.origin, true)) {
          return json({ error: "the request's Origin is not this dashboard" }, 403)
        }
      }
      if (path.startsWith("/api/") && token !== undefined && (!read || !loopback)) {
        const given = request.headers[TOKEN_HEADER]
        if (given === undefined || given === "") {
          return json({ error: `this needs the dashboard's token (${TOKEN_HEADER} header)` }, 401)
        }
        if (!PageAccess.sameToken(given, token)) return json({ error: "wrong token" }, 403)
      }
      if (operation !== undefined && !read) return yield* control(operation, request)
      if (read && path === "/api/snapshot") {
        return yield* snapshot(admin, actions).pipe(
          Effect.map((s) => json(s)),
          // A store that does not answer is shown on the page, not hidden.
          Effect.catch((error) => Effect.succeed(json({ error: error.message }, 503))),
        )
      }
      return HttpServerResponse.text("not found\n", { status: 404 })
    })
    yield* server.serve(app)
    const shown = PageAccess.isWildcard(host)
      ? "127.0.0.1"
      : PageAccess.bracket(host.replace(/^\[|\]$/g, ""))
    return { url: `http://${shown}:${port}/`, port, token, admin } satisfies Served
  })

/** Shows a typed error's message (it names the field and the value) and exits with code 1. */
const userError = (error: { readonly message: string }): CliError.UserError =>
  new CliError.UserError({ cause: error, userMessage: printable(error.message, true) })

/**
 * `dashboard --store <s> [--port <n>] [--host <addr>] [--allow-actions]`: serves the dashboard
 * until interrupted (Ctrl-C), printing its URL first.
 *
 * @category constructors
 * @since 0.1.0
 */
export const command = Command.make(
  "dashboard",
  {
    store: storeFlag,
    port: Flag.String("port").pipe(
      Flag.withMetavar("n"),
      Flag.withDescription(`The port, 0 for any free one (default: ${DEFAULT_PORT})`),
      Flag.withDefault(String(DEFAULT_PORT)),
    ),
    host: Flag.String("host").pipe(
      Flag.withMetavar("addr"),
      Flag.withDescription(
        "The address to listen on (default: 127.0.0.1). Beyond loopback every read needs the token too",
      ),
      Flag.withDefault("127.0.0.1"),
    ),
    allowActions: Flag.Boolean("allow-actions").pipe(
      Flag.withDescription(
        `Open the store writable and offer pause, resume, trigger, retry and cancel, each needing the token (${TOKEN_ENV}, or one printed at start)`,
      ),
      Flag.withDefault(false),
    ),
  },
  (input) =>
    Effect.gen(function* () {
      const port = parsePort(input.port)
      if (typeof port !== "number") return yield* userError(port)
      const fromEnv = yield* Config.option(Config.String(TOKEN_ENV)).pipe(
        Effect.orElseSucceed(() => Option.none<string>()),
      )
      let token: string | undefined
      if (Option.isSome(fromEnv) && fromEnv.value !== "") {
        const checked = checkToken(fromEnv.value)
        if (typeof checked !== "string") return yield* userError(checked)
        token = checked
      }
      const store = resolveStore(input.store, process.cwd())
      yield* Effect.scoped(
        Effect.gen(function* () {
          const served = yield* serve({
            store,
            port,
            host: input.host,
            allowActions: input.allowActions,
            token,
          }).pipe(
            Effect.mapError((error) =>
              userError(
                error._tag === "ServeError"
                  ? {
                      message: `cannot listen on ${input.host}:${port}: ${String((error.cause as { message?: unknown } | undefined)?.message ?? error.cause)}`,
                    }
                  : error,
              ),
            ),
          )
          // One write: whoever waits for the URL has the store and the token lines with it.
          const lines = [
            `tickwork dashboard: ${served.url}`,
            `store: ${served.admin.store} ${served.admin.target} (${served.admin.readOnly ? "read-only" : "writable: pause, resume, trigger, retry and cancel allowed"})`,
          ]
          if (served.token !== undefined) {
            lines.push(
              token === undefined
                ? `token: ${served.token} (open ${served.url}#token=${served.token})`
                : `token: from ${TOKEN_ENV}`,
            )
          }
          yield* Console.log(printable(lines.join("\n"), true))
          return yield* Effect.never
        }),
      )
    }),
).pipe(
  Command.withDescription(
    "Serve a web page of the store's tasks by state, lease owners, recent ledger and lateness; read-only unless --allow-actions.",
  ),
)
