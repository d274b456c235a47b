/* pg_reset.h: emptying a PostgreSQL database before a benchmark runs on
 * it, so every run starts from the same place. Benchmarks only. */
#pragma once

/* Drops and recreates the public schema of the database at @url (libpq
 * conninfo or URI); exits the program when it cannot. */
void stg_bench_pg_reset (const char *url);
