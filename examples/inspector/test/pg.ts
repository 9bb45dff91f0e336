/** PostgreSQL for tests: a fresh database per test on the run's throwaway server. */
export { freshDatabase } from "@tickwork/testkit/Postgres"
