// st2 web: live updates from the server's event stream. The server sends rendered, escaped
// rows; this script only places them. No other script runs on st2's pages.
"use strict";
(function () {
  const page = document.body.dataset.page;
  if (page === "message" || !window.EventSource) return;
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});

  // "notify me": Web Push to this browser (st2.web.push). The button carries a one-use CSRF
  // token in data-csrf; every answer to a POST brings the next one.
  const notify = document.getElementById("notify");
  if (notify && "serviceWorker" in navigator && "PushManager" in window) {
    const kinds = document.getElementById("notify-kinds");
    if (kinds) kinds.hidden = false;
    const keyBytes = (text) => {
      const base64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
      return Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
    };
    notify.addEventListener("click", async () => {
      notify.disabled = true;
      try {
        if ((await Notification.requestPermission()) !== "granted") throw new Error("notifications are blocked here");
        const keyAnswer = await fetch("/push/key", { credentials: "same-origin" });
        if (!keyAnswer.ok) throw new Error("no push key (" + keyAnswer.status + ")");
        const { key } = await keyAnswer.json();
        const registration = await navigator.serviceWorker.ready;
        const subscription = await registration.pushManager.subscribe({
          userVisibleOnly: true, applicationServerKey: keyBytes(key) });
        const picked = kinds ? Array.from(kinds.querySelectorAll("input[name=kind]:checked"), (box) => box.value) : [];
        const answer = await fetch("/push/subscribe", {
          method: "POST", credentials: "same-origin", headers: { "content-type": "application/json" },
          body: JSON.stringify({ subscription: subscription.toJSON(), kinds: picked.length ? picked : null,
                                 csrf: notify.dataset.csrf }) });
        const reply = await answer.json();
        if (reply.csrf) notify.dataset.csrf = reply.csrf;
        if (!answer.ok) throw new Error(reply.error || "refused (" + answer.status + ")");
        notify.textContent = "notifying: " + reply.kinds.join(", ");
      } catch (error) {
        notify.textContent = "notify me (" + error.message + ")";
      } finally {
        notify.disabled = false;
      }
    });
  }
  const stream = new EventSource("/stream");
  let pending = null;

  function fetchInto(url, id) {
    fetch(url, { credentials: "same-origin" })
      .then((answer) => (answer.ok ? answer.text() : null))
      .then((text) => {
        const element = document.getElementById(id);
        if (text === null || !element) return;
        element.innerHTML = text;
      });
  }

  function reloadRows() {
    if (pending) return;
    pending = setTimeout(() => {
      pending = null;
      const query = document.getElementById("fleet").dataset.query;
      fetchInto("/fragment/rows" + (query ? "?" + query : ""), "rows");
    }, 50);
  }

  // Whatever changed between the page's render and the stream's (re)connection reached no one:
  // read it once now.
  stream.addEventListener("open", () => {
    if (page === "fleet") reloadRows();
    if (page === "seat") {
      const id = encodeURIComponent(document.body.dataset.seat);
      fetchInto("/fragment/blocked/" + id, "blocked-slot");
      fetchInto("/fragment/detail/" + id, "detail");
    }
  });

  stream.addEventListener("seat", (event) => {
    const seat = JSON.parse(event.data);
    const row = document.getElementById("seat-" + seat.id);
    if (page === "fleet") {
      const filtered = document.getElementById("fleet").dataset.query;
      const reorders = row && row.classList.contains("blocked") !== seat.blocked;
      if (!row || filtered || reorders) reloadRows(); else row.outerHTML = seat.html;
    } else if (page === "seat" && document.body.dataset.seat === seat.id) {
      const flipped = row && row.classList.contains("blocked") !== seat.blocked;
      if (row) row.outerHTML = seat.html;
      if (flipped) fetchInto("/fragment/blocked/" + encodeURIComponent(seat.id), "blocked-slot");
      fetchInto("/fragment/detail/" + encodeURIComponent(seat.id), "detail");
    }
  });
  stream.addEventListener("ask", (event) => {
    // A Claude seat's permission ask opened or closed: fetch what it is blocked on when the
    // page shows another ask.
    const ask = JSON.parse(event.data);
    if (page !== "seat" || document.body.dataset.seat !== ask.id) return;
    const shown = Array.from(document.querySelectorAll("#blocked-on input[name=channel][value=claude]"))
      .map((input) => input.form.querySelector("input[name=digest]").value);
    const stale = ask.digest ? !shown.includes(ask.digest) : shown.length > 0;
    if (stale) fetchInto("/fragment/blocked/" + encodeURIComponent(ask.id), "blocked-slot");
  });
  stream.addEventListener("fleet", () => {
    if (page === "fleet") reloadRows();
  });
  stream.addEventListener("usage", (event) => {
    const usage = document.getElementById("usage");
    if (usage) usage.outerHTML = event.data;
  });
  stream.addEventListener("counts", (event) => {
    const counts = JSON.parse(event.data);
    const total = document.getElementById("total");
    const blocked = document.getElementById("blocked");
    if (total) total.textContent = String(counts.seats);
    if (blocked) blocked.textContent = String(counts.blocked);
  });
  stream.addEventListener("event", (event) => {
    const list = document.getElementById("events");
    if (!list) return;
    const item = document.createElement("li");
    item.textContent = event.data;
    list.insertBefore(item, list.firstChild);
  });
})();
