"use strict";
(function () {
  // With the script a slider applies when released: its Set button is for pages without it.
  document.documentElement.classList.add("js");
  // The answer goes next to the control that was used, not to the top of the page.
  function show(form, ok, text) {
    var answer = form.nextElementSibling;
    if (!answer || !answer.classList.contains("answer")) {
      answer = document.createElement("p");
      answer.setAttribute("role", "status");
      form.insertAdjacentElement("afterend", answer);
    }
    answer.className = "answer " + (ok ? "ok" : "error");
    answer.textContent = text;
  }
  // Destructive requests ask first; a "no" sends nothing.
  document.addEventListener("submit", function (event) {
    var question = event.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);
  function answerText(answer) {
    if (answer.ok) return answer.message || "Done.";
    return (answer.message || "Refused.") + " (" + (answer.code || "error") + ")";
  }
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute("data-async")) return;
    event.preventDefault();
    var data = new URLSearchParams(new FormData(form, event.submitter));
    fetch(form.action, { method: "POST", body: data, credentials: "same-origin",
        headers: { "Accept": "application/json" } })
      .then(function (response) {
        if (response.status === 401) { location.href = "/login"; return null; }
        return response.json();
      })
      .then(function (answer) {
        if (!answer) return;
        show(form, answer.ok, answerText(answer));
        // Joining changes no home, so no event reloads the page: load it for the countdown.
        if (answer.ok && form.getAttribute("data-operation") === "permitJoin") location.reload();
      })
      .catch(function () { show(form, false, "The gateway did not answer."); });
  });
  document.addEventListener("change", function (event) {
    var input = event.target;
    if (input.type === "range" && input.form && input.form.hasAttribute("data-async")) {
      input.form.requestSubmit();
    }
  });
  function setValue(key, text, value, takesUnit) {
    document.querySelectorAll("output[data-k]").forEach(function (output) {
      if (output.getAttribute("data-k") !== key) return;
      output.textContent = text + (takesUnit ? output.getAttribute("data-unit") || "" : "");
    });
    document.querySelectorAll("[data-toggle]").forEach(function (button) {
      if (button.getAttribute("data-toggle") !== key) return;
      var on = value === true;
      button.value = on ? "false" : "true";
      button.textContent = on ? "Turn off" : "Turn on";
      button.classList.toggle("on", on);
      button.setAttribute("aria-pressed", on ? "true" : "false");
    });
    document.querySelectorAll("[data-k-input]").forEach(function (input) {
      if (input.getAttribute("data-k-input") === key && document.activeElement !== input) {
        input.value = String(value);
        input.classList.remove("unknown");
        input.removeAttribute("aria-valuetext");
      }
    });
  }
  var live = document.body.getAttribute("data-live");
  if (live && window.EventSource) {
    var source = new EventSource(live);
    source.addEventListener("value", function (event) {
      var update = JSON.parse(event.data);
      setValue(update.k, update.t, update.v, update.u);
    });
    source.addEventListener("reachable", function (event) {
      var update = JSON.parse(event.data);
      document.querySelectorAll("[data-reach]").forEach(function (badge) {
        if (badge.getAttribute("data-reach") === update.a) badge.hidden = update.r;
      });
    });
    source.addEventListener("reload", function () { location.reload(); });
    // A stream the gateway refused (429: too many open) or that cannot come back is closed
    // for good by the browser: say so, rather than showing values that no longer move.
    source.addEventListener("error", function () {
      if (source.readyState !== EventSource.CLOSED) return;
      var state = document.getElementById("live-state");
      if (!state) return;
      state.hidden = false;
      state.textContent = "Live updates stopped: the values on this page may be out of date. Reload the page.";
    });
    source.addEventListener("ended", function () { source.close(); location.href = "/login"; });
  }
  document.querySelectorAll(".countdown[data-until]").forEach(function (element) {
    var until = Number(element.getAttribute("data-until"));
    function tick() {
      var left = Math.round(until - Date.now() / 1000);
      if (left <= 0) { element.textContent = "Joining is closed."; return; }
      element.textContent = "Joining is open: " + left + " s left.";
      setTimeout(tick, 1000);
    }
    tick();
  });
})();