// Runs only if salt-api serves this file as JavaScript (a module script
// with another MIME type is refused). It logs in with fetch (the session
// cookie is set), opens EventSource('/events') authenticated by that
// cookie alone, runs a job with the cookie alone, records the job's
// events, and posts what it saw to /hook/brine-browser/report, where the
// test reads it from the event bus.
const report = { errors: [], tags: [], rets: {} };
// Each step goes to the console too: Chromium's log (--enable-logging)
// shows it when the test fails.
const log = (s) => {
  console.log("brine-test: " + s);
  document.getElementById("log").textContent += s + "\n";
};

async function post(path, body) {
  const r = await fetch(path, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: await r.json() };
}

function done() {
  if (report.sent) return;
  report.sent = true;
  post("/hook/brine-browser/report", report).then(
    (r) => log("report " + r.status),
    (e) => log("report failed " + e),
  );
}

function seen(ev) {
  if (ev.tag) report.tags.push(ev.tag);
  const m = /^salt\/job\/(\d+)\/ret\/(.+)$/.exec(ev.tag);
  if (m) report.rets[m[1] + " " + m[2]] = ev.data;
  if (!report.jid) return;
  const got = report.minions.filter((id) => (report.jid + " " + id) in report.rets);
  if (got.length === report.minions.length) {
    report.es.close();
    delete report.es;
    done();
  }
}

async function main() {
  report.css = getComputedStyle(document.body).getPropertyValue("--brine-css").trim();
  const creds = await (await fetch("/static/creds.json")).json();
  const login = await post("/login", creds);
  report.login = login.status;
  log("login " + login.status);
  report.user = login.body.return[0].user;
  const es = new EventSource("/events");
  report.es = es;
  es.onerror = () => {
    report.errors.push("EventSource error, readyState " + es.readyState);
    log("EventSource error, readyState " + es.readyState);
  };
  es.onmessage = (m) => seen(JSON.parse(m.data));
  es.onopen = async () => {
    report.opened = true;
    log("EventSource open");
    const run = await post("/", { client: "local_async", tgt: "*", fun: "test.ping" });
    report.run = run.status;
    report.minions = run.body.return[0].minions.slice().sort();
    report.jid = run.body.return[0].jid;
    log("job " + report.jid + " on " + report.minions.join(","));
    seen({ tag: "", data: {} });
  };
}

setTimeout(() => { report.errors.push("timed out"); if (report.es) report.es.close(); delete report.es; done(); }, 40000);
main().catch((e) => {
  report.errors.push(String(e));
  log("error " + e);
  done();
});
