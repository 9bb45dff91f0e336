/**
 * Vitest global setup of the inspector example: its dashboard is tested against a PostgreSQL fleet: a throwaway PostgreSQL cluster for the run
 * (`Postgres.globalSetup` of @tickwork/testkit), its URL handed to the tests as
 * `inject("databaseUrl")`. With DATABASE_URL set, that server is used instead and left alone.
 */
import * as Postgres from "@tickwork/testkit/Postgres"
import type { TestProject } from "vitest/node"

export default (project: TestProject) => Postgres.globalSetup(project, "the dashboard test")
