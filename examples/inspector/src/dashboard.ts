// The dashboard over a durable store: one loopback HTTP server, built on Effect's HTTP server
// (`@effect/platform-node`'s NodeHttpServer), serving dashboard.html and, on /api/snapshot, the
// store as JSON: tasks by state, lease owners and recent runners, the recent ledger of the whole
// store, and lateness. The store is opened read-only with `StoreAdmin` (a read-only SQLite
// connection; PostgreSQL sessions with `default_transaction_read_only`), so the dashboard can
// neither claim, run nor change anything; it has no route that writes. The page polls the
// snapshot once a second.
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { NodeHttpServer } from "@effect/platform-node"
import type { Errors as CoreErrors } from "@tickwork/core"
import { type DurableScheduler, type Errors, StoreAdmin } from "@tickwork/durable"
import { Clock, Effect, type Scope } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import type { ServeError } from "effect/http/HttpServerError"

/** How many tasks the snapshot lists (live ones first, in due order). */
export const TASKS_SHOWN = 500
/** How many of the store's latest runs and events the snapshot carries. */
export const LEDGER_SHOWN = 80

/** What /api/snapshot returns. */
export interface Snapshot {
  /** When it was read, epoch ms. */
  readonly at: number
  readonly store: "sqlite" | "postgres"
  /** The file, or `host:port/database` (never a password). */
  readonly target: string
  readonly readOnly: boolean
  readonly stats: StoreAdmin.StoreStats
  readonly tasks: StoreAdmin.TaskPage
  /** The latest runs and events of the whole store, newest first. */
  readonly recent: ReadonlyArray<DurableScheduler.DurableOccurrence>
}

/** The store as the page shows it. */
export const snapshot = (
  admin: StoreAdmin.StoreAdminShape,
): Effect.Effect<Snapshot, Errors.StoreError | CoreErrors.InvalidOption> =>
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
      stats,
      tasks,
      recent,
    } satisfies Snapshot
  })

const page = readFileSync(new URL("./dashboard.html", import.meta.url), "utf8")

/**
 * Opens `store` read-only and serves the dashboard on `host:port` (port 0: any free port) until
 * the scope closes. Fails with the store's typed error (an `InvalidOption` naming `store`,
 * `StoreLocked`, `StoreUnavailable`) or the server's.
 */
export const serve = (options: {
  readonly store: string
  readonly port: number
  readonly host?: string
}): Effect.Effect<
  { readonly url: string; readonly admin: StoreAdmin.StoreAdminShape },
  CoreErrors.InvalidOption | Errors.StoreLocked | Errors.StoreUnavailable | ServeError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const admin = yield* StoreAdmin.open(options.store, { readOnly: true })
    const host = options.host ?? "127.0.0.1"
    const server = yield* NodeHttpServer.make(() => createServer(), { port: options.port, host })
    const app = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = new URL(request.url, "http://localhost").pathname
      if (request.method !== "GET" && request.method !== "HEAD") {
        return HttpServerResponse.text("the dashboard is read-only\n", { status: 405 })
      }
      if (path === "/" || path === "/index.html") return HttpServerResponse.html(page)
      if (path === "/api/snapshot") {
        return yield* snapshot(admin).pipe(
          Effect.map((s) =>
            HttpServerResponse.jsonUnsafe(s, { headers: { "cache-control": "no-store" } }),
          ),
          // A store that does not answer is shown on the page, not hidden.
          Effect.catch((error) =>
            Effect.succeed(
              HttpServerResponse.jsonUnsafe({ error: error.message }, { status: 503 }),
            ),
          ),
        )
      }
      return HttpServerResponse.text("not found\n", { status: 404 })
    })
    yield* server.serve(app)
    const address = server.address
    const port = address._tag === "UnixPathAddress" ? options.port : address.port
    return { url: `http://${host}:${port}/`, admin }
  })
