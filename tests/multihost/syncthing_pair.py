"""Two real Syncthing instances on loopback sharing one folder: the replication engine of the
multihost tier and of ``benchmarks/multihost.py``.

Each instance has its own home (``syncthing generate --home``), a GUI/REST address and a sync
listen address on free loopback ports, and every outward path off before it first starts: global
discovery, local discovery, relays, NAT traversal, usage reporting, crash reporting, upgrades.
The two learn each other's device id only through the REST API (``/rest/system/status`` myID)
and are paired through ``/rest/config/devices`` with static ``tcp://127.0.0.1:<port>``
addresses; the shared folder is added through ``/rest/config/folders`` on both sides with a
short rescan interval and the filesystem watcher on. The folder's ``.stignore`` (written by the
caller before :meth:`SyncthingPair.share`) is what decides what crosses.

Only the processes started here are ended, by their own process group.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from support import poll_for

SYNCTHING = "syncthing"
FOLDER_ID = "st2-catalog"
RESCAN_SECONDS = 5
WATCH_DELAY_SECONDS = 1

# Every option that would reach past loopback, turned off in config.xml before the first start.
OFFLINE_OPTIONS = {
    "globalAnnounceEnabled": "false",
    "localAnnounceEnabled": "false",
    "relaysEnabled": "false",
    "natEnabled": "false",
    "urAccepted": "-1",
    "crashReportingEnabled": "false",
    "autoUpgradeIntervalH": "0",
    "startBrowser": "false",
    "reconnectionIntervalS": "1",
    "setLowPriority": "false",
    "stunServer": "",
}


def available() -> str | None:
    """The path of the syncthing binary, or None."""
    return shutil.which(SYNCTHING)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Syncthing:
    """One Syncthing instance: its home, REST address, listen address and process."""

    def __init__(self, home: Path, name: str) -> None:
        self.home = home
        self.name = name
        self.gui_port = self.listen_port = 0
        self.log = home.parent / f"syncthing-{name}.log"
        self.audit = home.parent / f"syncthing-{name}.audit"
        self.process: subprocess.Popen | None = None
        self.api_key = ""
        self.device_id = ""
        self.environment = dict(os.environ, STNODEFAULTFOLDER="1", STNOUPGRADE="1", STNORESTART="1",
                                HOME=str(home))
        subprocess.run([SYNCTHING, "generate", "--home", str(home), "--no-default-folder",
                        "--skip-port-probing"], check=True, capture_output=True, timeout=60,
                       env=self.environment)

    def _configure_offline(self) -> None:
        """Fresh free ports, and every outward path off, written into config.xml."""
        self.gui_port, self.listen_port = free_port(), free_port()
        path = self.home / "config.xml"
        tree = ElementTree.parse(path)
        root = tree.getroot()
        options = root.find("options")
        for name, value in OFFLINE_OPTIONS.items():
            element = options.find(name)
            if element is None:
                element = ElementTree.SubElement(options, name)
            element.text = value
        for element in options.findall("listenAddress"):
            options.remove(element)
        listen = ElementTree.SubElement(options, "listenAddress")
        listen.text = f"tcp://127.0.0.1:{self.listen_port}"
        for element in options.findall("globalAnnounceServer"):
            options.remove(element)
        gui = root.find("gui")
        gui.find("address").text = f"127.0.0.1:{self.gui_port}"
        self.api_key = gui.find("apikey").text
        tree.write(path)

    def start(self, attempts: int = 3) -> None:
        """Start on free ports and return once the REST API answers and the sync listener is
        bound. A port taken between the probe and the bind (another test's instance, an
        outgoing connection) is retried on new ports."""
        for attempt in range(attempts):
            self._configure_offline()
            handle = open(self.log, "ab")
            self.process = subprocess.Popen(
                [SYNCTHING, "serve", "--home", str(self.home), "--no-browser", "--no-restart", "--no-upgrade",
                 "--skip-port-probing", f"--gui-address=http://127.0.0.1:{self.gui_port}",
                 "--audit", f"--auditfile={self.audit}", "--logflags=3"],
                stdout=handle, stderr=subprocess.STDOUT, env=self.environment, start_new_session=True)
            handle.close()
            status = poll_for(self._ready, lambda: f"syncthing {self.name}'s REST API: {self.tail()}",
                              timeout=60, step=0.05)
            if status != "retry":
                self.device_id = status["myID"]
                return
            self.stop()
        raise AssertionError(f"syncthing {self.name} found no free ports in {attempts} attempts: {self.tail()}")

    def _ready(self):
        """The status once the API answers with the sync listener bound; "retry" when this
        start lost a port race (the process exited, or the listener reports an error)."""
        if self.process.poll() is not None:
            return "retry"
        try:
            status = self.rest("GET", "/rest/system/status")
        except (OSError, urllib.error.URLError):
            return None
        listener = (status.get("connectionServiceStatus") or {}).get(f"tcp://127.0.0.1:{self.listen_port}")
        if listener is None:
            return None
        if listener.get("error"):
            return "retry"
        return status if listener.get("lanAddresses") else None

    def rest(self, method: str, path: str, body=None, timeout: float = 30):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.gui_port}{path}", data=data, method=method,
                                         headers={"X-API-Key": self.api_key, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
        return json.loads(text) if text.strip() else None

    def tail(self, size: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-size:] if self.log.exists() else ""

    def audit_events(self) -> list[dict]:
        """Every event this instance has emitted since it started (its audit file, one JSON per line)."""
        if not self.audit.exists():
            return []
        events = []
        for line in self.audit.read_text(errors="replace").splitlines():
            try:
                events.append(json.loads(line))
            except ValueError:
                continue            # the line being written
        return events

    def scan(self, subdirectory: str | None = None) -> None:
        """Rescan the shared folder now (the call returns once the scan is done)."""
        query = f"/rest/db/scan?folder={FOLDER_ID}"
        if subdirectory:
            query += f"&sub={urllib.request.quote(subdirectory)}"
        self.rest("POST", query, timeout=60)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)


class SyncthingPair:
    """Two instances, ``a`` and ``b``, each with its copy of the shared folder."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.a = Syncthing(base / "st-a", "a")
        self.b = Syncthing(base / "st-b", "b")

    def start(self) -> None:
        for instance in (self.a, self.b):
            instance.start()
        for here, there in ((self.a, self.b), (self.b, self.a)):
            here.rest("POST", "/rest/config/devices", {
                "deviceID": there.device_id, "name": there.name,
                "addresses": [f"tcp://127.0.0.1:{there.listen_port}"],
                "autoAcceptFolders": False,
            })

    def share(self, path_a: Path, path_b: Path) -> None:
        """Share ``path_a`` (on a) and ``path_b`` (on b) as one folder; return once the two are
        connected and both have scanned."""
        for here, there, path in ((self.a, self.b, path_a), (self.b, self.a, path_b)):
            here.rest("POST", "/rest/config/folders", {
                "id": FOLDER_ID, "label": "st2 catalog", "path": str(path), "type": "sendreceive",
                "rescanIntervalS": RESCAN_SECONDS, "fsWatcherEnabled": True,
                "fsWatcherDelayS": WATCH_DELAY_SECONDS, "ignorePerms": False,
                "devices": [{"deviceID": here.device_id}, {"deviceID": there.device_id}],
            })
        poll_for(self.connected, lambda: f"the two syncthing instances to connect: {self.a.tail()} {self.b.tail()}",
                 timeout=60, step=0.1)

    def connected(self) -> bool:
        connections = self.a.rest("GET", "/rest/system/connections")["connections"]
        return bool(connections.get(self.b.device_id, {}).get("connected"))

    def in_step(self) -> bool:
        """Each side holds the other's whole index (the sequence it knows of the other is the
        other's own local sequence), and both are idle with nothing needed."""
        status = {instance.name: instance.rest("GET", f"/rest/db/status?folder={FOLDER_ID}")
                  for instance in (self.a, self.b)}
        for here, there in ((self.a, self.b), (self.b, self.a)):
            if status[here.name].get("state") != "idle" or status[here.name].get("needTotalItems", 1) != 0:
                return False
            known = here.rest("GET", f"/rest/db/completion?folder={FOLDER_ID}&device={there.device_id}")
            if known.get("sequence", -1) < status[there.name].get("sequence", 0) or known.get("needItems", 1) != 0:
                return False
        return True

    def settle(self, timeout: float = 60) -> None:
        """Return once every change on either side before now has crossed: both rescan now (the
        calls return after the scans), then both are in step."""
        self.a.scan()
        self.b.scan()
        poll_for(self.in_step, "the two syncthing copies to be in step", timeout=timeout, step=0.1)

    def stop(self) -> None:
        for instance in (self.a, self.b):
            instance.stop()
