/**
 * Vitest global setup of the release project: the packed `tickwork` CLI reads a PostgreSQL store
 * too, so the run gets a throwaway PostgreSQL cluster (`Postgres.globalSetup` of
 * @tickwork/testkit), its URL handed to the tests as `inject("databaseUrl")`. With DATABASE_URL
 * set, that server is used instead and left alone.
 */
import * as Postgres from "@tickwork/testkit/Postgres"
import type { TestProject } from "vitest/node"

export default (project: TestProject) => Postgres.globalSetup(project, "the release pack test")
