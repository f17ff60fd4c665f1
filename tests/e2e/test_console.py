"""The web console (/ui/) in a real browser: Debian's Chromium driven by playwright-core (js/console.mjs)
against this depotd and its PostgreSQL, on the console's own listener (--console-listen: another origin than
the S3 listener's, where what users store is served). People sign in with an access key and secret or an API token; the
console acts through the public REST API with their session, so the API's authorization decides everything:
four-eyes approval, roles, team isolation. Also the session's own rules: the CSRF header and Origin check
for cookie-authenticated changes, sign-out revoking the cookie, and the headers the console is served with;
and the attacks on its origin: a stored HTML page opened by a signed-in user (stored XSS), and a cross-site
form that signs the victim in as the attacker (login CSRF).

Needs node >= 20, tests/e2e/js/node_modules (scripts/js-deps) and /usr/bin/chromium (scripts/deps).
Screenshots of the main pages are left under the pytest basetemp (console-screenshots/).
"""

from __future__ import annotations

import datetime as dt
import json
import secrets
import shutil
import socket
import time
from pathlib import Path

import pytest
import requests

from depot_harness import browser_tmpdir, clean_env, run, sanitizer_reports, unique_bucket_name
from rest import assert_problem, call, token_for, validate

HERE = Path(__file__).resolve().parent
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node", path="/usr/local/bin:/usr/bin:/bin")
    assert path, "node is not installed (the console tests need node >= 20)"
    assert (HERE / "js" / "node_modules" / "playwright-core").is_dir(), (
        "tests/e2e/js/node_modules is missing: run scripts/js-deps (npm ci in tests/e2e/js)")
    assert CHROMIUM.exists(), "/usr/bin/chromium is missing: scripts/deps installs Debian's chromium"
    return path


@pytest.fixture(scope="module")
def world(depot):
    """A team with a writer (who uploads), two maintainers (submitter and approver) and a reader; an outsider
    who administers another team; a model with two versions (v2: one file changed, one removed, one added)."""
    tag = secrets.token_hex(3)
    names = {role: f"ui-{role[:6]}-{tag}" for role in ("writer", "submitter", "approver", "reader", "outsider")}
    users = {role: depot.add_user(name, f"{role.title()} {tag}") for role, name in names.items()}
    tokens = {role: token_for(depot, name)["token"] for role, name in names.items()}
    admin = token_for(depot, "alice")["token"]
    team, other = f"vision-{tag}", f"speech-{tag}"
    for t in (team, other):
        assert call(depot, "POST", "/api/v1/teams", token=admin, body={"name": t}).status_code == 201
    for role, team_role in (("writer", "writer"), ("submitter", "maintainer"), ("approver", "maintainer"),
                            ("reader", "reader")):
        r = call(depot, "PUT", f"/api/v1/teams/{team}/members/{names[role]}", token=admin, body={"role": team_role})
        assert r.status_code == 200, r.text
    assert call(depot, "PUT", f"/api/v1/teams/{other}/members/{names['outsider']}", token=admin,
                body={"role": "admin"}).status_code == 200

    bucket = unique_bucket_name("ui")
    s3 = depot.client(names["writer"])
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="m/config.json", Body=b'{"layers": 50}')
    s3.put_object(Bucket=bucket, Key="m/weights.bin", Body=secrets.token_bytes(2000))
    model = f"a-rather-long-model-name-that-must-not-break-the-layout-{tag}"
    w = lambda method, path, body=None: call(depot, method, f"/api/v1/teams/{team}{path}",  # noqa: E731
                                             token=tokens["writer"], body=body)
    assert w("POST", "/models", {"name": model, "bucket": bucket, "prefix": "m/",
                                 "description": "image classifier"}).status_code == 201
    assert w("POST", f"/models/{model}/versions", {"label": "v1.0.0", "metrics": {"top1": 0.76, "loss": 0.9},
                                                   "labels": {"dataset": "imagenet"}}).status_code == 201
    s3.put_object(Bucket=bucket, Key="m/config.json", Body=b'{"layers": 101}')
    s3.delete_object(Bucket=bucket, Key="m/weights.bin")
    s3.put_object(Bucket=bucket, Key="m/tokenizer.txt", Body=b"a b c\n")
    assert w("POST", f"/models/{model}/versions",
             {"label": "v1.1.0", "parent": 1, "metrics": {"top1": 0.79, "loss": 0.7},
              "run_url": "https://ci.example/runs/42", "labels": {"dataset": "imagenet"}}).status_code == 201
    # version 1 waits for approval: the reader's forged approve targets it
    assert w("POST", f"/models/{model}/versions/1/submit", {}).status_code == 200
    # The stored-XSS attacker (the writer, any user would do) stores an HTML page whose script, opened by a
    # signed-in console user, reads the session's CSRF token and creates an access key for that user: on
    # the console's origin (relative URLs) and on its address (a cross-origin try).
    s3.put_object(Bucket=bucket, Key="report.html", ContentType="text/html", Body=xss_page(depot).encode())
    report_url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "report.html"},
                                           ExpiresIn=3600)
    return {"team": team, "other": other, "model": model, "users": users, "tokens": tokens, "names": names,
            "bucket": bucket, "report_url": report_url}


def xss_page(depot) -> str:
    steal = """
async function steal(base) {
  try {
    const s = await (await fetch(base + "/api/v1/sessions/current", {credentials: "include"})).json();
    const r = await fetch(base + "/api/v1/keys", {method: "POST", credentials: "include",
      headers: {"Content-Type": "application/json", "X-Depot-CSRF": s.csrf_token}, body: "{}"});
    return base + ":" + r.status;
  } catch (e) {
    return base + ":" + e;
  }
}
(async () => {
  const got = [await steal(""), await steal(CONSOLE)];
  document.title = "done " + got.join(" ");
})();
"""
    return ("<!doctype html><title>quarterly report</title><p>Quarterly report</p>\n<script>const CONSOLE = "
            + json.dumps(depot.console_endpoint) + ";" + steal + "</script>\n")


def key_count(depot, user_id: str) -> int:
    return depot.db.scalar(f"SELECT count(*) FROM access_keys WHERE user_id = '{user_id}'")


@pytest.fixture(scope="module")
def console(depot, world, node, tmp_path_factory):
    """One browser run through every scenario (js/console.mjs); its observations."""
    shots = tmp_path_factory.mktemp("console-screenshots")
    users = {role: {"access_key": u.access_key, "secret": u.secret, "token": world["tokens"][role]}
             for role, u in world["users"].items()}
    env = clean_env({"CONSOLE_INPUT": json.dumps({
        "endpoint": depot.console_endpoint, "team": world["team"], "other": world["other"],
        "model": world["model"], "users": users, "shots": str(shots), "report_url": world["report_url"],
    }), "NODE_NO_WARNINGS": "1"})
    victim = world["names"]["reader"]
    keys_before = key_count(depot, victim)
    with browser_tmpdir() as profile:
        env["TMPDIR"] = profile
        proc = run([node, str(HERE / "js" / "console.mjs")], env=env, cwd=str(HERE / "js"), timeout=300)
    out = json.loads(proc.stdout)
    assert "error" not in out, out["error"]
    out["shots"] = shots
    out["victim_keys_added"] = key_count(depot, victim) - keys_before
    return out


def version(depot, world, n: int) -> dict:
    r = call(depot, "GET", f"/api/v1/teams/{world['team']}/models/{world['model']}/versions/{n}",
             token=world["tokens"]["writer"])
    assert r.status_code == 200, r.text
    return r.json()


def test_the_pages_run_without_script_errors(console):
    assert not console.get("page_errors"), console["page_errors"]
    # the only console errors are the refused requests the scenarios make on purpose (Chromium logs them)
    for line in console.get("console_errors", []):
        assert "Failed to load resource" in line and any(f" {s} " in line for s in ("401", "403", "404")), line


def test_a_stored_html_page_opened_by_a_signed_in_user_cannot_act_for_them(depot, world, console):
    """Stored XSS: the reader, signed in to the console, opens the writer's presigned link to report.html.
    Its script would read the CSRF token and create an access key for the reader; it must not run at all
    (the object is sandboxed), and even if it did, the console is another origin whose cookie is not
    honoured on the S3 listener. On ff74932 (console and objects on one origin) it created the key."""
    attack = console["xss"]
    assert attack["status"] == 200, attack
    # the object was served, sandboxed and never sniffed
    assert attack["csp"] == "sandbox" and attack["nosniff"] == "nosniff", attack
    assert not attack["title"].startswith("done"), attack  # the script did not run
    assert console["victim_keys_added"] == 0
    # the victim's session is untouched and still works (on the console's listener only)
    live = {"depot_session": console["reader_cookie"]["value"]}
    assert requests.get(depot.console_endpoint + "/api/v1/whoami", cookies=live, timeout=30).status_code == 200


def test_sign_in_and_browse_to_a_model(console):
    assert console["wrong_secret"].startswith("The access key and secret, or the API token, are not valid")
    assert console["model_versions"] == 2
    cookie = console["submitter_cookie"]
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/api/v1/"
    assert cookie["value"].startswith("dps_") and cookie["expires"] > 0


def test_the_model_filter_asks_the_server(world, console):
    assert console["filter_label"] == [world["model"]]
    assert console["filter_no_label"] == []
    assert console["filter_name"] == [world["model"]]


def test_models_and_versions_filter_by_name_and_label_on_the_server_with_paging(depot, world):
    team, tok = world["team"], world["tokens"]["writer"]
    bucket = unique_bucket_name("uif")
    s3 = depot.client(world["names"]["writer"])
    s3.create_bucket(Bucket=bucket)
    for name, labels in (("filt-alpha", {"stage": "prod"}), ("filt-beta", {"stage": "dev"}),
                         ("filt-gamma", {"stage": "prod", "n": 5}), ("other-delta", {"stage": "prod"})):
        s3.put_object(Bucket=bucket, Key=f"{name}/x", Body=b"x")
        assert call(depot, "POST", f"/api/v1/teams/{team}/models", token=tok,
                    body={"name": name, "bucket": bucket, "prefix": f"{name}/"}).status_code == 201
        for v in (labels, {"stage": "old"}):
            assert call(depot, "POST", f"/api/v1/teams/{team}/models/{name}/versions", token=tok,
                        body={"labels": v}).status_code == 201

    def names(query: str) -> list[str]:
        out, cursor = [], None
        while True:  # one match per page: the cursor continues the filtered list
            q = query + "&limit=1" + (f"&cursor={cursor}" if cursor else "")
            r = call(depot, "GET", f"/api/v1/teams/{team}/models?{q}", token=world["tokens"]["reader"])
            page = validate(r, "GET", "/api/v1/teams/{team}/models")
            assert len(page["items"]) <= 1
            out += [m["name"] for m in page["items"]]
            cursor = page["next_cursor"]
            if not cursor:
                return out
    assert names("name=FILT") == ["filt-alpha", "filt-beta", "filt-gamma"]
    assert names("name=filt-&label=stage%3Dprod") == ["filt-alpha", "filt-gamma"]
    assert names("label=stage=prod") == ["filt-alpha", "filt-gamma", "other-delta"]
    assert names("label=n=5") == ["filt-gamma"]
    assert names("label=stage=") == [] and names("name=%25") == [] and names("name=_") == []
    vpath = "/api/v1/teams/{team}/models/{model}/versions"
    r = call(depot, "GET", f"/api/v1/teams/{team}/models/filt-gamma/versions?label=stage=old",
             token=world["tokens"]["reader"])
    assert [v["number"] for v in validate(r, "GET", vpath)["items"]] == [2]
    r = call(depot, "GET", f"/api/v1/teams/{team}/models/filt-gamma/versions?label=stage=prod&limit=5",
             token=world["tokens"]["reader"])
    assert [v["number"] for v in validate(r, "GET", vpath)["items"]] == [1]
    for bad in ("label=stage", "label==prod", "label=" + "k" * 129 + "=v", "name=" + "n" * 129):
        r = call(depot, "GET", f"/api/v1/teams/{team}/models?{bad}", token=world["tokens"]["reader"])
        assert_problem(r, 400, "invalid-argument")
    assert_problem(call(depot, "GET", f"/api/v1/teams/{team}/models/filt-gamma/versions?label=x",
                        token=world["tokens"]["reader"]), 400, "invalid-argument")
    # another team's member learns nothing through a filter
    assert_problem(call(depot, "GET", f"/api/v1/teams/{team}/models?label=stage=prod",
                        token=world["tokens"]["outsider"]), 404, "not-found")


def test_four_eyes_the_submitter_cannot_approve_a_second_maintainer_can(depot, world, console):
    assert console["self_approve"] == "The submitter of a version cannot approve it"
    assert console["state_after_self_approve"] == "pending"
    assert console["approvals"].startswith("1 of 1")
    v = version(depot, world, 2)
    assert v["state"] == "approved" and v["approvals"] == [world["names"]["approver"]]
    assert v["submitted_by"] == world["names"]["submitter"]


def test_a_click_downloads_the_file_through_a_link_made_for_it(console):
    assert console["download_buttons"] == ["config.json", "tokenizer.txt"]
    d = console["download"]
    assert d["name"] == "config.json" and d["body"] == '{"layers": 101}'
    # a link made for this click, valid five minutes (not the manifest's day-long URLs)
    assert "X-Amz-Signature=" in d["url"] and "X-Amz-Expires=300&" in d["url"] + "&"


def link_url(depot, world, who: str, query: str) -> requests.Response:
    return call(depot, "GET", f"/api/v1/teams/{world['team']}/models/{world['model']}/versions/2/download-link"
                f"{query}", token=world["tokens"][who])


def test_a_download_link_is_short_lived_authorized_like_reading_and_audited(depot, world):
    template = "/api/v1/teams/{team}/models/{model}/versions/{version}/download-link"
    since = depot.db.scalar("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM audit_log_id")
    r = link_url(depot, world, "reader", "?path=config.json")
    body = validate(r, "GET", template)
    assert r.headers["Cache-Control"] == "no-store"
    assert body["path"] == "config.json" and body["size"] == 15 and body["expires_in"] == 300
    got = requests.get(body["url"], timeout=30)
    assert got.status_code == 200 and got.content == b'{"layers": 101}'
    rows = depot.db.query(f"SELECT actor, action, resource, details->>'expires_in' FROM audit_log WHERE id > {since}"
                          " AND action = 'model.download_link'")
    assert [tuple(x) for x in rows] == [(world["names"]["reader"], "model.download_link",
                                         f"{world['team']}/{world['model']}/2/config.json", "300")]
    # a tiny lifetime: the link stops working once it is over
    short = validate(link_url(depot, world, "reader", "?path=config.json&expires_in=1"), "GET", template)
    deadline = time.monotonic() + 5
    while (late := requests.get(short["url"], timeout=30)).status_code == 200 and time.monotonic() < deadline:
        time.sleep(0.25)
    assert late.status_code == 403 and b"Request has expired" in late.content
    # a member of another team learns nothing (as for reading the version); a reader of the team is enough
    assert_problem(link_url(depot, world, "outsider", "?path=config.json"), 404, "not-found")
    # hostile or wrong input: a precise 400 or 404, and no row
    since = depot.db.scalar("SELECT last_value FROM audit_log_id")
    for query, status in (("", 400), ("?path=", 400), ("?path=weights.bin", 404), ("?path=../config.json", 404),
                          ("?path=config.json&expires_in=0", 400), ("?path=config.json&expires_in=3601", 400),
                          ("?path=config.json&expires_in=1e3", 400), ("?path=config.json&expires_in=-5", 400),
                          ("?path=" + "a" * 1025, 400)):
        r = link_url(depot, world, "reader", query)
        assert r.status_code == status, (query, r.text)
        validate(r, "GET", template)
    assert depot.db.scalar(f"SELECT count(*) FROM audit_log WHERE id > {since} AND action = 'model.download_link'") == 0


def test_a_manifests_links_are_download_links(depot, world):
    """The attacker's request (fourth attack): a reader fetched the version manifest, whose links were valid
    for --event-url-expiry (a day), was removed from the team, and read the files with them; the issue left
    no audit row. A manifest read by a caller carries download links: valid an hour at most, and issued
    under an audit row of the caller's, as getFileDownloadLink's are."""
    template = "/api/v1/teams/{team}/models/{model}/versions/{version}/manifest"
    since = depot.db.scalar("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM audit_log_id")
    r = call(depot, "GET", f"/api/v1/teams/{world['team']}/models/{world['model']}/versions/2/manifest",
             token=world["tokens"]["reader"])
    body = validate(r, "GET", template)
    assert body["files"] and all("X-Amz-Expires=3600&" in f["url"] + "&" for f in body["files"]), body
    rows = depot.db.query(f"SELECT actor, resource, details->>'manifest', details->>'expires_in' FROM audit_log "
                          f"WHERE id > {since} AND action = 'model.download_link'")
    assert [tuple(x) for x in rows] == [(world["names"]["reader"], f"{world['team']}/{world['model']}/2",
                                         "true", "3600")]


def test_a_link_outlives_no_credential(depot, world):
    """The attacker's request (fifth attack): with a token expiring in 20 s, a reader asked for an hour-long
    download link (and manifest links) and read the file with it after the token had expired. A link ends
    with the caller's key or token at the latest."""
    short = call(depot, "POST", "/api/v1/tokens", token=world["tokens"]["reader"], body={"expires_in": 20})
    assert short.status_code == 201, short.text
    base = f"/api/v1/teams/{world['team']}/models/{world['model']}/versions/2"
    link = call(depot, "GET", f"{base}/download-link?path=config.json&expires_in=3600", token=short.json()["token"])
    assert link.status_code == 200, link.text
    assert 1 <= link.json()["expires_in"] <= 20, link.json()
    manifest = call(depot, "GET", f"{base}/manifest", token=short.json()["token"])
    assert manifest.status_code == 200, manifest.text
    expires = [int(f["url"].split("X-Amz-Expires=")[1].split("&")[0]) for f in manifest.json()["files"]]
    assert expires and all(1 <= e <= 20 for e in expires), expires


def test_an_alias_moves(depot, world, console):
    assert ["production", "version 2"] in console["aliases"]
    r = call(depot, "GET", f"/api/v1/teams/{world['team']}/models/{world['model']}/aliases/production",
             token=world["tokens"]["reader"])
    assert r.json()["version"] == 2


def test_a_warm_up_starts_and_shows_its_progress(depot, world, console):
    (job,) = console["warmups"]
    assert job[1] == "2" and job[2] in ("running", "completed", "failed") and job[3].endswith("%")
    r = call(depot, "GET", f"/api/v1/teams/{world['team']}/models/{world['model']}/warmups",
             token=world["tokens"]["reader"])
    assert [(j["id"], j["version"]) for j in r.json()["items"]] == [(int(job[0]), 2)]


def test_the_diff_shows_the_right_files_and_metric_deltas(console):
    d = console["diff"]
    assert [row[0] for row in d["added"]] == ["tokenizer.txt"]
    assert [row[0] for row in d["removed"]] == ["weights.bin"]
    assert [row[0] for row in d["changed"]] == ["config.json"]
    assert ["top1", "0.76", "0.79", "+0.03"] in d["metrics"]
    assert ["loss", "0.9", "0.7", "-0.2"] in d["metrics"]


def test_a_reader_sees_no_approve_button_and_a_forged_approve_is_refused(depot, world, console):
    assert console["reader_state"] == "pending"
    assert console["reader_approve_button"] == 0 and console["reader_buttons"] == 0
    forged = console["forged_approve"]
    assert forged["status"] == 403, forged
    assert version(depot, world, 1)["state"] == "pending"
    assert console["reader_after_reload"] == world["users"]["reader"].display_name
    assert console["first_tab"] == "Skip to content"


def test_a_change_without_the_csrf_header_is_refused(depot, world, console):
    refused = console["no_csrf"]
    assert refused["status"] == 403
    assert "X-Depot-CSRF" in refused["body"]["detail"]
    assert version(depot, world, 1)["state"] == "pending"


def test_a_user_of_another_team_sees_nothing_of_it(world, console):
    assert world["team"] not in console["outsider_teams"] and world["other"] in console["outsider_teams"]
    assert console["outsider_model"] == "No such team"
    assert console["outsider_team"] == "No such team"


def test_sign_out_ends_the_session(depot, console):
    assert console["after_sign_out"] == 401
    assert console["signed_out_page_shows_sign_in"]
    # the cookie the browser held no longer works anywhere
    old = console["approver_cookie"]["value"]
    r = requests.get(depot.console_endpoint + "/api/v1/whoami", cookies={"depot_session": old}, timeout=30)
    assert_problem(r, 401, "unauthenticated")
    # while the submitter's session (never signed out) still does
    live = console["submitter_cookie"]["value"]
    r = requests.get(depot.console_endpoint + "/api/v1/whoami", cookies={"depot_session": live}, timeout=30)
    assert r.status_code == 200


def test_the_session_cookie_is_honoured_only_on_the_console_listener(depot, world, console):
    """Browsers send a host's cookies to every port of it: on the S3 listener (the origin of stored objects)
    the cookie is no credential, for reads and changes alike; tokens and signatures work there as ever."""
    assert depot.console_endpoint != depot.endpoint
    live = {"depot_session": console["submitter_cookie"]["value"]}
    session = requests.get(depot.console_endpoint + "/api/v1/sessions/current", cookies=live, timeout=30).json()
    keys_before = key_count(depot, world["names"]["submitter"])
    assert_problem(requests.get(depot.endpoint + "/api/v1/whoami", cookies=live, timeout=30), 401, "unauthenticated")
    assert_problem(requests.get(depot.endpoint + "/api/v1/sessions/current", cookies=live, timeout=30), 401,
                   "unauthenticated")
    made = requests.post(depot.endpoint + "/api/v1/keys", cookies=live, json={}, timeout=30,
                         headers={"X-Depot-CSRF": session["csrf_token"], "Origin": depot.endpoint})
    assert_problem(made, 401, "unauthenticated")
    assert key_count(depot, world["names"]["submitter"]) == keys_before
    # no session is opened on the S3 listener (its cookie would be sent to the console's port too)
    u = world["users"]["reader"]
    opened = requests.post(depot.endpoint + "/api/v1/sessions", timeout=30,
                           json={"access_key_id": u.access_key, "secret_access_key": u.secret})
    assert_problem(opened, 404, "not-found")
    assert "Set-Cookie" not in opened.headers
    # bearer tokens and SigV4 still reach the REST API on the S3 listener
    assert call(depot, "GET", "/api/v1/whoami", token=world["tokens"]["reader"]).status_code == 200
    url = depot.endpoint + "/api/v1/whoami"
    assert requests.get(url, headers=depot.sign("GET", url, user="bob"), timeout=30).status_code == 200


def test_cookie_changes_need_the_csrf_token_and_the_own_origin(depot, world, console):
    cookie = {"depot_session": console["submitter_cookie"]["value"]}
    current = requests.get(depot.console_endpoint + "/api/v1/sessions/current", cookies=cookie, timeout=30)
    session = validate(current, "GET", "/api/v1/sessions/current")
    url = f"{depot.console_endpoint}/api/v1/teams/{world['team']}/models/{world['model']}/versions/1/reject"
    wrong = requests.post(url, cookies=cookie, json={}, headers={"X-Depot-CSRF": "x" * 32}, timeout=30)
    assert_problem(wrong, 403, "access-denied")
    # the right token, sent from another site's page (the browser names that site in Origin)
    cross = requests.post(url, cookies=cookie, json={},
                          headers={"X-Depot-CSRF": session["csrf_token"], "Origin": "http://evil.example"},
                          timeout=30)
    assert_problem(cross, 403, "access-denied")
    # nor from the S3 listener's origin (a stored page would be there), though it is the same host
    same_host = requests.post(url, cookies=cookie, json={},
                              headers={"X-Depot-CSRF": session["csrf_token"], "Origin": depot.endpoint}, timeout=30)
    assert_problem(same_host, 403, "access-denied")
    assert version(depot, world, 1)["state"] == "pending"


def test_sessions_api(depot, world):
    u = world["users"]["reader"]
    made = requests.post(depot.console_endpoint + "/api/v1/sessions", timeout=30,
                         json={"access_key_id": u.access_key, "secret_access_key": u.secret, "expires_in": 600})
    body = validate(made, "POST", "/api/v1/sessions")
    assert body["user_id"] == world["names"]["reader"] and "secret" not in json.dumps(body).lower()
    set_cookie = made.headers["Set-Cookie"]
    for attribute in ("HttpOnly", "SameSite=Strict", "Path=/api/v1/", "Max-Age="):
        assert attribute in set_cookie
    assert "Secure" not in set_cookie  # no TLS here; with --tls-cert the cookie is Secure
    for bad in ({}, {"token": "dpt_x", "access_key_id": u.access_key}, {"access_key_id": u.access_key},
                {"token": world["tokens"]["reader"], "expires_in": 10}, {"token": 5}, {"nope": 1}):
        assert_problem(requests.post(depot.console_endpoint + "/api/v1/sessions", json=bad, timeout=30), 400,
                       "invalid-argument")
    refused = requests.post(depot.console_endpoint + "/api/v1/sessions", timeout=30,
                            json={"access_key_id": u.access_key, "secret_access_key": u.secret + "x"})
    assert_problem(refused, 401, "unauthenticated")
    # a bearer token is no session: there is no current session to read or end
    for method in ("GET", "DELETE"):
        assert_problem(call(depot, method, "/api/v1/sessions/current", token=world["tokens"]["reader"]), 404,
                       "not-found")
    # a session ends with its credential: revoking the token it was opened with ends it
    tok = token_for(depot, world["names"]["reader"])
    made = requests.post(depot.console_endpoint + "/api/v1/sessions", json={"token": tok["token"]}, timeout=30)
    cookie = {"depot_session": made.cookies["depot_session"]}
    assert requests.get(depot.console_endpoint + "/api/v1/whoami", cookies=cookie, timeout=30).status_code == 200
    assert call(depot, "DELETE", f"/api/v1/tokens/{tok['id']}", token=tok["token"]).status_code == 204
    assert requests.get(depot.console_endpoint + "/api/v1/whoami", cookies=cookie, timeout=30).status_code == 401


def test_a_session_mints_no_credential_that_outlives_the_one_it_was_opened_with(depot, world):
    """A console session stands for the key or token it was opened with: a token made in a session opened
    with a token that expires in two minutes expires then too, not never."""
    short = call(depot, "POST", "/api/v1/tokens", token=world["tokens"]["reader"], body={"expires_in": 120})
    assert short.status_code == 201, short.text
    made = requests.post(depot.console_endpoint + "/api/v1/sessions", json={"token": short.json()["token"]},
                         timeout=30)
    session = validate(made, "POST", "/api/v1/sessions")
    r = requests.post(depot.console_endpoint + "/api/v1/tokens", json={}, timeout=30,
                      cookies={"depot_session": made.cookies["depot_session"]},
                      headers={"X-Depot-CSRF": session["csrf_token"], "Origin": depot.console_endpoint})
    assert r.status_code == 201, r.text
    assert r.json()["expires_at"] is not None
    limit = dt.datetime.fromisoformat(short.json()["expires_at"].replace("Z", "+00:00"))
    assert abs((dt.datetime.fromisoformat(r.json()["expires_at"].replace("Z", "+00:00")) - limit).total_seconds()) < 1


def test_the_console_is_served_with_strict_headers(depot):
    index = requests.get(depot.console_endpoint + "/ui/", timeout=30)
    assert index.status_code == 200 and index.headers["Content-Type"] == "text/html; charset=utf-8"
    csp = index.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert index.headers["X-Content-Type-Options"] == "nosniff"
    assert "<script" in index.text and "<script>" not in index.text  # module scripts by URL only, none inline
    script = requests.get(depot.console_endpoint + "/ui/app.js", timeout=30)
    assert script.headers["Content-Type"] == "text/javascript; charset=utf-8"
    again = requests.get(depot.console_endpoint + "/ui/app.js", headers={"If-None-Match": script.headers["ETag"]}, timeout=30)
    assert again.status_code == 304 and again.content == b""
    assert requests.get(depot.console_endpoint + "/ui", allow_redirects=False, timeout=30).headers["Location"] == "/ui/"
    missing = requests.get(depot.console_endpoint + "/ui/../api/v1/whoami", timeout=30)
    assert missing.status_code in (401, 404)
    assert requests.get(depot.console_endpoint + "/ui/nope.js", timeout=30).status_code == 404
    # the console's listener serves its pages and the REST API, nothing else: no S3 (a POST to /ui/ too)
    assert requests.post(depot.console_endpoint + "/ui/x", timeout=30).status_code == 404


def test_the_console_and_stored_objects_never_share_an_origin(depot, world):
    """The S3 listener serves no console page (a pointer to the console's address instead), and the console's
    listener serves no object, listing or Hub file, whatever the credential."""
    assert depot.console_endpoint != depot.endpoint
    for path in ("/ui/", "/ui/app.js", "/ui"):
        r = requests.get(depot.endpoint + path, allow_redirects=False, timeout=30)
        assert r.status_code == 404 and r.headers["Content-Type"] == "text/plain; charset=utf-8", (path, r.text)
        assert f":{depot.console_port}/ui/" in r.text and "<" not in r.text
        assert r.headers["X-Content-Type-Options"] == "nosniff" and "default-src 'none'" in r.headers[
            "Content-Security-Policy"]
    # the object itself, presigned, on the console's port: 404, and not its bytes
    on_console = world["report_url"].replace(depot.endpoint, depot.console_endpoint)
    assert on_console != world["report_url"]
    r = requests.get(on_console, timeout=30)
    assert r.status_code == 404 and b"<script>" not in r.content and "sandbox" not in r.headers.get(
        "Content-Security-Policy", "")
    url = f"{depot.console_endpoint}/{world['bucket']}/report.html"
    signed = depot.sign("GET", url, user=world["names"]["writer"])
    assert requests.get(url, headers=signed, timeout=30).status_code == 404
    hub = requests.get(f"{depot.console_endpoint}/{world['team']}/{world['model']}/resolve/main/config.json",
                       headers={"Authorization": f"Bearer {world['tokens']['reader']}"}, timeout=30)
    assert hub.status_code == 404 and b"layers" not in hub.content
    for path in ("/", f"/{world['bucket']}?list-type=2", "/api/models/" + world["team"] + "/" + world["model"]):
        assert requests.get(depot.console_endpoint + path, timeout=30).status_code == 404, path
    # the health endpoints answer on both (probes)
    assert requests.get(depot.console_endpoint + "/healthz", timeout=30).status_code == 200


def sandboxed(r: requests.Response) -> bool:
    return (r.headers.get("Content-Security-Policy") == "sandbox"
            and r.headers.get("X-Content-Type-Options") == "nosniff")


def test_every_object_surface_answers_sandboxed(depot, world):
    """GetObject and HeadObject (presigned or signed, overrides of the response's headers included), the models
    view, the snapshot view and the Hub API's resolve all serve stored bytes: each answer carries
    `Content-Security-Policy: sandbox` and `nosniff`, so no stored page runs script on depotd's origin."""
    writer = depot.client(world["names"]["writer"])
    bucket, team, model = world["bucket"], world["team"], world["model"]
    r = requests.get(world["report_url"], timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/html" and sandboxed(r)
    override = writer.generate_presigned_url(
        "get_object", ExpiresIn=600,
        Params={"Bucket": bucket, "Key": "report.html", "ResponseContentType": "text/html; charset=utf-8"})
    r = requests.get(override, timeout=30)
    assert r.status_code == 200 and r.headers["Content-Type"] == "text/html; charset=utf-8" and sandboxed(r)
    head = writer.generate_presigned_url("head_object", Params={"Bucket": bucket, "Key": "report.html"}, ExpiresIn=600)
    assert sandboxed(requests.head(head, timeout=30))
    ranged = requests.get(world["report_url"], headers={"Range": "bytes=0-9"}, timeout=30)
    assert ranged.status_code == 206 and sandboxed(ranged)
    etag = requests.get(world["report_url"], timeout=30).headers["ETag"]
    cached = requests.get(world["report_url"], headers={"If-None-Match": etag}, timeout=30)
    assert cached.status_code == 304 and sandboxed(cached)
    # the models view (s3://models/<team>/<model>/<version>/<path>)
    view = writer.generate_presigned_url("get_object", ExpiresIn=600,
                                         Params={"Bucket": "models", "Key": f"{team}/{model}/2/config.json"})
    r = requests.get(view, timeout=30)
    assert r.status_code == 200 and r.content == b'{"layers": 101}' and sandboxed(r)
    # the snapshot view (<bucket>/.snapshots/<name>/<key>)
    made = call(depot, "POST", f"/api/v1/buckets/{bucket}/snapshots", token=world["tokens"]["writer"],
                body={"name": "xss-" + secrets.token_hex(3)})
    assert made.status_code == 201, made.text
    snap = writer.generate_presigned_url("get_object", ExpiresIn=600,
                                         Params={"Bucket": bucket, "Key": made.json()["s3_prefix"] + "report.html"})
    r = requests.get(snap, timeout=30)
    assert r.status_code == 200 and b"<script>" in r.content and sandboxed(r)
    # the Hub API's resolve, GET and HEAD
    url = f"{depot.endpoint}/{team}/{model}/resolve/main/config.json"
    hub = {"Authorization": f"Bearer {world['tokens']['reader']}"}
    r = requests.get(url, headers=hub, timeout=30)
    assert r.status_code == 200 and r.content == b'{"layers": 101}' and sandboxed(r)
    assert sandboxed(requests.head(url, headers=hub, allow_redirects=False, timeout=30))


def test_a_cross_site_form_cannot_sign_the_victim_in_as_the_attacker(depot, world):
    """Login CSRF: evil.example's page posts a text/plain form whose name and value spell JSON with "token"
    twice (Boost.JSON keeps the last): on ff74932 this opened a session of the attacker's token (201, with
    Set-Cookie) in the victim's browser. Each of the three rules (JSON content type, Origin and
    Sec-Fetch-Site, no duplicate key) refuses it on its own, and no session row is written."""
    attacker = world["tokens"]["outsider"]
    url = depot.console_endpoint + "/api/v1/sessions"
    form = ('{"expires_in":86400,"token":"' + "=" + '","token":"' + attacker + '"}').encode()
    sessions = lambda: depot.db.scalar("SELECT count(*) FROM console_sessions")  # noqa: E731
    before = sessions()
    # the exact request Chromium sends for <form method=post enctype=text/plain action=...>
    attack = requests.post(url, data=form, timeout=30, headers={
        "Content-Type": "text/plain", "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site",
        "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"})
    assert_problem(attack, 415, "unsupported-media-type")
    assert "Set-Cookie" not in attack.headers
    # as JSON (which a form cannot send, a script only after a preflight depotd refuses), from the same page:
    # the Origin refuses it; without Origin, the duplicate key does
    cross = requests.post(url, data=form, timeout=30, headers={"Content-Type": "application/json",
                                                               "Origin": "http://evil.example"})
    assert_problem(cross, 403, "access-denied")
    dup = requests.post(url, data=form, headers={"Content-Type": "application/json"}, timeout=30)
    problem = assert_problem(dup, 400, "invalid-argument")
    assert "'token' twice" in problem["detail"]
    # another site named by Sec-Fetch-Site alone, and the S3 listener's origin (same host, other port)
    body = {"token": attacker}
    for headers in ({"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}, {"Origin": depot.endpoint},
                    {"Origin": "null"}, {"Origin": "http://evil.example"}):
        assert_problem(requests.post(url, json=body, headers=headers, timeout=30), 403, "access-denied")
    assert sessions() == before
    # the console's own page (same origin) still signs in
    ok = requests.post(url, json=body, timeout=30,
                       headers={"Origin": depot.console_endpoint, "Sec-Fetch-Site": "same-origin"})
    assert ok.status_code == 201, ok.text
    assert sessions() == before + 1


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/json5", "text/json"])
def test_every_json_body_must_be_declared_json(depot, world, content_type):
    """A REST body is JSON and says so (parameters allowed): anything else is 415 before it is read, and
    nothing changes; Content-Type: application/json; charset=utf-8 is fine."""
    tok = world["tokens"]["writer"]
    name = "ct-" + secrets.token_hex(3)
    body = json.dumps({"name": name, "bucket": world["bucket"], "prefix": "m/"}).encode()
    headers = {} if content_type is None else {"Content-Type": content_type}
    r = call(depot, "POST", f"/api/v1/teams/{world['team']}/models", token=tok, raw=body, headers=headers)
    assert_problem(r, 415, "unsupported-media-type")
    assert call(depot, "GET", f"/api/v1/teams/{world['team']}/models/{name}", token=tok).status_code == 404
    ok = call(depot, "POST", f"/api/v1/teams/{world['team']}/models", token=tok, raw=body,
              headers={"Content-Type": "application/json; charset=utf-8"})
    assert ok.status_code == 201, ok.text


def test_a_json_body_naming_a_member_twice_is_refused(depot, world):
    """Two readers of one body must not see different values: a duplicate key, at any depth, is 400 and
    nothing changes."""
    tok = world["tokens"]["writer"]
    name = "dup-" + secrets.token_hex(3)
    for raw in (f'{{"name":"{name}","bucket":"{world["bucket"]}","prefix":"m/","prefix":"other/"}}',
                f'{{"name":"{name}","bucket":"{world["bucket"]}","prefix":"m/","labels":{{"a":"1","a":"2"}}}}'):
        r = call(depot, "POST", f"/api/v1/teams/{world['team']}/models", token=tok, raw=raw.encode(),
                 headers={"Content-Type": "application/json"})
        problem = assert_problem(r, 400, "invalid-argument")
        assert "twice" in problem["detail"]
    assert call(depot, "GET", f"/api/v1/teams/{world['team']}/models/{name}", token=tok).status_code == 404


def test_screenshots_are_saved(console):
    for name in ("sign-in", "model", "version", "diff", "version-narrow"):
        shot = console["shots"] / f"{name}.png"
        assert shot.stat().st_size > 1000, name


def test_the_console_can_be_served_from_an_installed_directory(depot, tmp_path):
    """--ui-dir: a branded or patched console from a directory, read on each request; only plain names that
    resolve to a regular file inside the directory are served (no traversal, no hidden files, no symbolic
    link out of it)."""
    ui = tmp_path / "ui"
    (ui / "img").mkdir(parents=True)
    (ui / "index.html").write_text("<!doctype html><title>ACME model console</title>\n")
    (ui / "app.js").write_text("export const brand = 'acme';\n")
    (ui / "img" / "logo.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>\n")
    (ui / ".env").write_text("SECRET=1\n")
    secret = tmp_path / "outside.txt"
    secret.write_text("not for the web\n")
    (ui / "leak.txt").symlink_to(secret)
    (ui / "img" / "up").symlink_to(tmp_path)
    server = depot.sibling(tmp_path / "depot")
    server.extra_args = ["--ui-dir", str(ui)]
    server.start()
    try:
        base = server.console_endpoint + "/ui/"
        index = requests.get(base, timeout=30)
        assert index.status_code == 200 and "ACME model console" in index.text
        assert "frame-ancestors 'none'" in index.headers["Content-Security-Policy"]
        logo = requests.get(base + "img/logo.svg", timeout=30)
        assert logo.status_code == 200 and logo.headers["Content-Type"] == "image/svg+xml"
        # edited in place: the next request serves the new file, with a new ETag
        first = requests.get(base + "app.js", timeout=30)
        (ui / "app.js").write_text("export const brand = 'acme 2';\n")
        second = requests.get(base + "app.js", headers={"If-None-Match": first.headers["ETag"]}, timeout=30)
        assert second.status_code == 200 and "acme 2" in second.text and second.headers["ETag"] != first.headers["ETag"]
        # the embedded console's files are not mixed in
        assert requests.get(base + "dom.js", timeout=30).status_code == 404
        # sent as written (a client library would normalize the dots away)
        for attack in (".env", "leak.txt", "img/up/outside.txt", "..%2foutside.txt", "%2e%2e/outside.txt",
                       "../outside.txt", "img/../index.html", "img//logo.svg", "img/", "./index.html",
                       "img%2flogo.svg", "img/up/../../outside.txt"):
            status, body = raw_get(server.console_port, "/ui/" + attack)
            assert status == 404 and b"not for the web" not in body and b"SECRET" not in body, (attack, status)
    finally:
        status = server.stop()
        assert not sanitizer_reports(server.log_text()) and status == 0, server.log_text()[-8000:]
    # a directory without index.html is refused at start
    bad = run([str(depot.bin_dir / "depotd"), "--ui-dir", str(ui / "img")], check=False,
              env={**server.server_env(), "DEPOT_LISTEN": "127.0.0.1:1"})
    assert bad.returncode != 0 and "--ui-dir" in bad.stderr


def raw_get(port: int, target: str) -> tuple[int, bytes]:
    """Status and whole answer of a GET of `target` exactly as written."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        out = b""
        while chunk := sock.recv(65536):
            out += chunk
    return int(out.split(b" ", 2)[1]), out
