"""The seed's salt-api client: Python requests against rest_cherrypy.

POST /login with {"username", "password", "eauth": "pam"} -> return[0].token;
POST / with X-Auth-Token and {"client": "local_async", "tgt", "fun"}
-> return[0].jid; GET /jobs/<jid> until the result is there. The
certificate is self-signed, so verify=False.

The test feeds {"url", "username", "password", "tgt", "fun"} on standard
input (the password never reaches an argument list) and reads one JSON
document from standard output.
"""
import json
import sys
import time

import requests
import urllib3

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


class SaltAPI:
    def __init__(self, url, username, password, eauth="pam"):
        self.url = url.rstrip("/")
        resp = requests.post(
            self.url + "/login",
            json={"username": username, "password": password, "eauth": eauth},
            verify=False,
        )
        resp.raise_for_status()
        self.token = resp.json()["return"][0]["token"]

    def _headers(self):
        return {"X-Auth-Token": self.token, "Accept": "application/json"}

    def run_async(self, tgt, fun):
        resp = requests.post(
            self.url + "/",
            json={"client": "local_async", "tgt": tgt, "fun": fun},
            headers=self._headers(),
            verify=False,
        )
        resp.raise_for_status()
        return resp.json()["return"][0]["jid"]

    def job(self, jid, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            resp = requests.get(
                self.url + "/jobs/" + jid, headers=self._headers(), verify=False
            )
            resp.raise_for_status()
            body = resp.json()
            minions = body["info"][0]["Minions"]
            if minions and all(m in body["return"][0] for m in minions):
                return body
            time.sleep(0.5)
        raise TimeoutError("job %s did not finish" % jid)


def main():
    req = json.load(sys.stdin)
    api = SaltAPI(req["url"], req["username"], req["password"])
    jid = api.run_async(req["tgt"], req["fun"])
    print(json.dumps({"jid": jid, "job": api.job(jid)}))


if __name__ == "__main__":
    main()
