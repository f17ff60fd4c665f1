// What tests/layering/check_no_sql.py must find (the ctest no_sql_checker_finds_sql expects it to fail on
// this file). Not compiled.
auto a = sql(c, "SELECT id FROM buckets WHERE name = $1", name);
auto b = sql(c, "INSERT INTO teams (name) VALUES ($1) ON CONFLICT DO NOTHING", name);
auto d = "UPDATE blobs b SET refcount = refcount + 1";
auto e = "DELETE FROM model_aliases a USING model_versions v";
auto f = "coalesce(x, y) FROM object_versions o ";
