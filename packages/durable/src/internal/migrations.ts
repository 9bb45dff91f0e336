/**
 * @internal
 * The store's migrations, shared by SQLite and PostgreSQL through the generic `Migrator` (it
 * needs only a `SqlClient`; the few dialect differences are inline). Recorded in
 * `tickwork_migrations`.
 */
import { Effect } from "effect"
import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"

/** Every migration, by id, in order: a store at any of them is brought up to the last. */
export const migrations = {
  "0001_tasks": Effect.gen(function* () {
    const sql = yield* SqlClient
    const serial = sql.onDialectOrElse({
      pg: () => sql.literal("BIGSERIAL PRIMARY KEY"),
      orElse: () => sql.literal("INTEGER PRIMARY KEY"),
    })
    yield* sql`CREATE TABLE tickwork_tasks (
        id TEXT PRIMARY KEY,
        generation INTEGER NOT NULL,
        handler TEXT NOT NULL,
        payload TEXT NOT NULL,
        schedule TEXT NOT NULL,
        priority INTEGER NOT NULL,
        retry TEXT NOT NULL,
        missed_runs TEXT NOT NULL,
        pause_after INTEGER NOT NULL,
        timeout_ms BIGINT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('scheduled', 'running', 'done', 'failed', 'cancelled')),
        slot BIGINT NOT NULL,
        run_at BIGINT NOT NULL,
        due_at BIGINT NOT NULL,
        attempt INTEGER NOT NULL,
        run_number INTEGER NOT NULL,
        consecutive_failures INTEGER NOT NULL,
        deliveries INTEGER NOT NULL,
        fence BIGINT NOT NULL,
        lease_owner TEXT,
        seq BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        finished_at BIGINT,
        last_error TEXT
      )`
    yield* sql`CREATE INDEX tickwork_tasks_due ON tickwork_tasks (due_at)
        WHERE state IN ('scheduled', 'running')`
    yield* sql`CREATE INDEX tickwork_tasks_finished ON tickwork_tasks (finished_at)
        WHERE finished_at IS NOT NULL`
    yield* sql`CREATE TABLE tickwork_runs (
        task_id TEXT NOT NULL,
        generation INTEGER NOT NULL,
        slot BIGINT NOT NULL,
        attempt INTEGER NOT NULL,
        run_at BIGINT NOT NULL,
        started_at BIGINT NOT NULL,
        finished_at BIGINT NOT NULL,
        outcome TEXT NOT NULL,
        error TEXT,
        fence BIGINT NOT NULL,
        owner TEXT NOT NULL,
        delivery INTEGER NOT NULL,
        state TEXT NOT NULL,
        next_run_at BIGINT,
        PRIMARY KEY (task_id, generation, slot, attempt)
      )`
    yield* sql`CREATE INDEX tickwork_runs_finished ON tickwork_runs (finished_at)`
    yield* sql`CREATE TABLE tickwork_events (
        id ${serial},
        task_id TEXT NOT NULL,
        generation INTEGER NOT NULL,
        kind TEXT NOT NULL,
        first_slot BIGINT NOT NULL,
        last_slot BIGINT NOT NULL,
        count INTEGER NOT NULL,
        cause TEXT,
        at BIGINT NOT NULL,
        fence BIGINT,
        owner TEXT,
        detail TEXT
      )`
    yield* sql`CREATE INDEX tickwork_events_task ON tickwork_events (task_id)`
    yield* sql`CREATE INDEX tickwork_events_at ON tickwork_events (at)`
  }),
  "0002_paused": Effect.gen(function* () {
    const sql = yield* SqlClient
    // SPEC §5, §7: a recurring task paused by its failure policy (or by hand) is kept as a
    // live row in state `paused`, with the reason, and where a resumed held retry goes on.
    yield* sql.onDialectOrElse({
      pg: () =>
        Effect.gen(function* () {
          yield* sql`ALTER TABLE tickwork_tasks DROP CONSTRAINT tickwork_tasks_state_check`
          yield* sql`ALTER TABLE tickwork_tasks ADD CONSTRAINT tickwork_tasks_state_check
              CHECK (state IN ('scheduled', 'running', 'paused', 'done', 'failed', 'cancelled'))`
          yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN paused_reason TEXT`
          yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN resume_from BIGINT NOT NULL DEFAULT -1`
        }),
      // SQLite cannot change a CHECK constraint: the table is rebuilt.
      orElse: () =>
        Effect.gen(function* () {
          yield* sql`CREATE TABLE tickwork_tasks_0002 (
              id TEXT PRIMARY KEY,
              generation INTEGER NOT NULL,
              handler TEXT NOT NULL,
              payload TEXT NOT NULL,
              schedule TEXT NOT NULL,
              priority INTEGER NOT NULL,
              retry TEXT NOT NULL,
              missed_runs TEXT NOT NULL,
              pause_after INTEGER NOT NULL,
              timeout_ms BIGINT NOT NULL,
              state TEXT NOT NULL
                CHECK (state IN ('scheduled', 'running', 'paused', 'done', 'failed', 'cancelled')),
              slot BIGINT NOT NULL,
              run_at BIGINT NOT NULL,
              due_at BIGINT NOT NULL,
              attempt INTEGER NOT NULL,
              run_number INTEGER NOT NULL,
              consecutive_failures INTEGER NOT NULL,
              deliveries INTEGER NOT NULL,
              fence BIGINT NOT NULL,
              lease_owner TEXT,
              seq BIGINT NOT NULL,
              created_at BIGINT NOT NULL,
              updated_at BIGINT NOT NULL,
              finished_at BIGINT,
              last_error TEXT,
              paused_reason TEXT,
              resume_from BIGINT NOT NULL DEFAULT -1
            )`
          yield* sql`INSERT INTO tickwork_tasks_0002 SELECT *, NULL, -1 FROM tickwork_tasks`
          yield* sql`DROP TABLE tickwork_tasks`
          yield* sql`ALTER TABLE tickwork_tasks_0002 RENAME TO tickwork_tasks`
          yield* sql`CREATE INDEX tickwork_tasks_due ON tickwork_tasks (due_at)
              WHERE state IN ('scheduled', 'running')`
          yield* sql`CREATE INDEX tickwork_tasks_finished ON tickwork_tasks (finished_at)
              WHERE finished_at IS NOT NULL`
        }),
    })
  }),
  "0003_controls": Effect.gen(function* () {
    const sql = yield* SqlClient
    // SPEC §3, §7, §15: per-task catch-up window, tags, circuit breakers and updates in place.
    // Columns added with defaults keep every 0002 row valid as it is (no rebuild needed).
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN tags TEXT NOT NULL DEFAULT '[]'`
    // The task's own catch-up window, ms; NULL: the layer's `catchUpWindow` applies.
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN window_ms BIGINT`
    // The key of its row in tickwork_breakers; NULL: no breaker.
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN breaker TEXT`
    // A schedule change waiting for the slot in progress to end (JSON), or NULL.
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN restart TEXT`
    // Raised by every update: a completion decided on an older revision is decided again.
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN revision INTEGER NOT NULL DEFAULT 0`
    yield* sql`CREATE INDEX tickwork_tasks_breaker ON tickwork_tasks (breaker)
        WHERE breaker IS NOT NULL`
    // One row per (tag, task): tasks({ tag }) reads an index, not every task. A row counts only
    // for the task's generation: a reused id's old tags never match its new task.
    yield* sql`CREATE TABLE tickwork_tags (
        tag TEXT NOT NULL,
        task_id TEXT NOT NULL,
        generation INTEGER NOT NULL,
        PRIMARY KEY (tag, task_id, generation)
      )`
    yield* sql`CREATE INDEX tickwork_tags_task ON tickwork_tags (task_id)`
    // Circuit breakers (SPEC §7), shared by the processes of a fleet: a row is changed only in
    // the transaction of the completion (or half-open step) that moves it.
    yield* sql`CREATE TABLE tickwork_breakers (
        key TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        shared INTEGER NOT NULL,
        policy TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('closed', 'open', 'half-open')),
        failures INTEGER NOT NULL,
        opens INTEGER NOT NULL,
        opened_at BIGINT,
        half_open_at BIGINT,
        probe TEXT,
        probe_generation INTEGER,
        updated_at BIGINT NOT NULL
      )`
    yield* sql`CREATE INDEX tickwork_breakers_half_open ON tickwork_breakers (half_open_at)
        WHERE state = 'open'`
    // Breaker transitions are ledger events too: which breaker.
    yield* sql`ALTER TABLE tickwork_events ADD COLUMN breaker TEXT`
  }),
  "0004_fleet": Effect.gen(function* () {
    const sql = yield* SqlClient
    // SPEC §17: the claims of a process whose database session ended are found by owner
    // (the running rows of owners whose liveness lock is free), without scanning due rows.
    yield* sql`CREATE INDEX tickwork_tasks_running_owner ON tickwork_tasks (lease_owner)
      WHERE state = 'running'`
  }),
  "0005_origin": Effect.gen(function* () {
    const sql = yield* SqlClient
    // Who asked for a pause, resume or cancel by hand (`cli`, `dashboard`, …). NULL for every
    // other event and for controls called through the scheduler's API, so older rows stay valid.
    yield* sql`ALTER TABLE tickwork_events ADD COLUMN origin TEXT`
  }),
  "0006_results": Effect.gen(function* () {
    const sql = yield* SqlClient
    // SPEC §19.3: a run's kept value (JSON text, bounded by `maxResultBytes`) and why a value
    // was not kept. NULL for every run before, and for handlers that declare no result schema.
    yield* sql`ALTER TABLE tickwork_runs ADD COLUMN result TEXT`
    yield* sql`ALTER TABLE tickwork_runs ADD COLUMN result_error TEXT`
  }),
  "0007_manual": Effect.gen(function* () {
    const sql = yield* SqlClient
    // SPEC §19.1: the pending run a trigger set aside (JSON: slot, due time, attempt, and the
    // fields that go back with it), put back when the manual run ends. NULL otherwise, so
    // every row before reads as having no manual run.
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN kept TEXT`
  }),
  "0008_manual_runs": Effect.gen(function* () {
    const sql = yield* SqlClient
    // SPEC §19.1: whether a ledger run was a manual one (a trigger's or a slot retry's), 1 or 0,
    // so that no lateness figure counts it. Every row before reads as 0: not manual.
    yield* sql`ALTER TABLE tickwork_runs ADD COLUMN manual INTEGER NOT NULL DEFAULT 0`
  }),
  "0009_limits": Effect.gen(function* () {
    const sql = yield* SqlClient
    // SPEC §20: a task's flow-control group and key (NULL: none, so every row before has
    // neither), and why its due run waits: the cause, the scope that holds it, since when and,
    // for a rate wait, when its window opens (epoch ms). Written by the claim; NULL otherwise.
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN task_group TEXT`
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN task_key TEXT`
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN wait_cause TEXT`
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN wait_scope TEXT`
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN wait_since BIGINT`
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN wait_until BIGINT`
    // A scope's running rows are counted at each claim that touches it: by index, not by scan.
    yield* sql`CREATE INDEX tickwork_tasks_running_group ON tickwork_tasks (task_group)
      WHERE state = 'running' AND task_group IS NOT NULL`
    yield* sql`CREATE INDEX tickwork_tasks_running_key ON tickwork_tasks (task_key)
      WHERE state = 'running' AND task_key IS NOT NULL`
    yield* sql`CREATE INDEX tickwork_tasks_running_handler ON tickwork_tasks (handler)
      WHERE state = 'running'`
    // The claimers' next wake: the earliest end of a rate wait, by index.
    yield* sql`CREATE INDEX tickwork_tasks_rate_wait ON tickwork_tasks (wait_until)
      WHERE wait_cause = 'rate-limited'`
    // The starts of rate-limited scopes (SPEC §20.2), one row per claimed run, kept for the
    // largest window `per` and pruned by the claims that add to them.
    yield* sql`CREATE TABLE tickwork_scope_starts (
        scope TEXT NOT NULL,
        at BIGINT NOT NULL
      )`
    yield* sql`CREATE INDEX tickwork_scope_starts_scope ON tickwork_scope_starts (scope, at)`
  }),
  "0010_dedup": Effect.gen(function* () {
    const sql = yield* SqlClient
    // SPEC §20.3: a task's deduplication key, its mode and (throttle) window in ms. NULL for
    // every row before, which reads as a task with no key. The key's holder is the newest row
    // under the key (by `created_at`, then `seq`), found through the index.
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN dedup_key TEXT`
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN dedup_mode TEXT`
    yield* sql`ALTER TABLE tickwork_tasks ADD COLUMN dedup_window_ms BIGINT`
    yield* sql`CREATE INDEX tickwork_tasks_dedup ON tickwork_tasks (dedup_key, created_at)
        WHERE dedup_key IS NOT NULL`
  }),
  "0011_claim_order": Effect.gen(function* () {
    const sql = yield* SqlClient
    // The claim reads its due rows in SPEC §4's order (due time, priority rank, push order) and
    // stops at its limit: from this index, instead of reading every due row and sorting them
    // all (PostgreSQL cannot use a top-N sort under FOR UPDATE). With 10k rows due, a claim
    // of 32 took 8.5 ms on PostgreSQL by the old index and 0.1 ms by this one. It serves every
    // query the old index on due_at served (its first column).
    yield* sql`DROP INDEX tickwork_tasks_due`
    yield* sql`CREATE INDEX tickwork_tasks_due ON tickwork_tasks (due_at, priority, seq)
      WHERE state IN ('scheduled', 'running')`
  }),
}

/** Runs the migrations (of `record`, all by default) not yet recorded. */
export const migrateWith = (record: Record<string, Effect.Effect<void, unknown, SqlClient>>) =>
  Migrator.make({})({ table: "tickwork_migrations", loader: Migrator.fromRecord(record) })

/** Runs the migrations not yet recorded. */
export const migrate = migrateWith(migrations)
