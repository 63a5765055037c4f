import Hummingbird

/// The page's stylesheet and script, served from the binary (a hub may have no internet, and a
/// single binary is all a Pi needs). The script only enhances: every form works without it.
enum Assets {
    static let stylesheet = """
        :root{color-scheme:light dark;--fg:#1d232a;--bg:#f4f5f7;--card:#fff;--line:#d8dde3;--accent:#0b6bcb;\
        --ok:#1f7a3d;--bad:#b42318;--on-accent:#fff;--hint:#5f6b76;--edge:#7a848e;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
        @media (prefers-color-scheme:dark){:root{--fg:#e7eaee;--bg:#14181c;--card:#1e242a;--line:#38424c;--accent:#5aa9f5;\
        --ok:#4cc27a;--bad:#ff8a7a;--on-accent:#0b1826;--hint:#9aa5b1;--edge:#6b7785}}
        *{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);line-height:1.4}
        header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1rem;background:var(--card);\
        border-bottom:1px solid var(--line)}
        header nav{display:flex;flex-wrap:wrap;gap:.4rem .9rem;align-items:center}
        .brand{font-weight:700;text-decoration:none;color:var(--fg)}a{color:var(--accent)}
        main{max-width:70rem;margin:0 auto;padding:1rem}h1{font-size:1.5rem;margin:.2rem 0 1rem}
        h2{font-size:1.15rem;margin:1.4rem 0 .6rem}h3{font-size:1rem;margin:0 0 .5rem}h4{font-size:.9rem;margin:.6rem 0 .2rem}
        .card{background:var(--card);border:1px solid var(--line);border-radius:.6rem;padding:.8rem;margin:0 0 .6rem}
        .cards{list-style:none;padding:0}.narrow{max-width:24rem;margin:2rem auto}
        .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(16rem,1fr));gap:.6rem}
        .characteristic{display:flex;flex-wrap:wrap;align-items:center;gap:.3rem .6rem;padding:.25rem 0;\
        border-top:1px solid var(--line)}
        .label{flex:1 1 7rem}.value{font-variant-numeric:tabular-nums;font-weight:600}
        form{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center;margin:.3rem 0}form.inline{display:inline-flex;margin:0}
        .stack{flex-direction:column;align-items:stretch}.stack label{display:flex;flex-direction:column;gap:.2rem}
        input,select,button{font:inherit;padding:.45rem .6rem;border-radius:.4rem;border:1px solid var(--edge);\
        background:var(--bg);color:var(--fg);min-height:2.5rem}
        input[type=range]{flex:1 1 8rem;padding:0}.js form.command input[type=range]+button{display:none}input[type=range].unknown{opacity:.35}
        button{background:var(--accent);border-color:var(--accent);color:var(--on-accent);cursor:pointer}
        button.link{background:none;border:none;color:var(--accent);padding:.2rem;min-height:0}
        button.danger{background:var(--bad);border-color:var(--bad)}
        button.toggle{background:var(--bg);color:var(--fg);border-color:var(--line)}
        button.toggle.on{background:var(--ok);border-color:var(--ok);color:var(--on-accent)}
        .badge{font-size:.75rem;font-weight:500;padding:.1rem .4rem;border-radius:1rem;border:1px solid var(--line)}
        .badge.off{color:var(--bad);border-color:var(--bad)}
        .notice{padding:.6rem .8rem;border-radius:.4rem;border:1px solid var(--line);background:var(--card)}
        .answer{flex-basis:100%;margin:.1rem 0 .3rem;font-size:.9rem}.answer.ok{color:var(--ok)}.answer.error{color:var(--bad)}
        .notice.ok{border-color:var(--ok)}.notice.error{border-color:var(--bad);color:var(--bad)}
        nav.rooms{display:flex;flex-wrap:wrap;gap:.3rem .8rem;margin:0 0 .4rem}\
        .grid{align-items:start}
        .hint{color:var(--hint)}.row{display:flex;flex-wrap:wrap;gap:.5rem}details.edit{margin-top:.4rem}
        .health{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}.health dd{margin:0;font-weight:600}.health dd.trouble{color:var(--bad)}
        .users{list-style:none;padding:0}.users li{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
        :focus-visible{outline:3px solid var(--accent);outline-offset:2px}button:focus-visible{outline-color:var(--fg)}
        .skip{position:absolute;left:-100vw}.skip:focus{left:1rem;top:.5rem;z-index:1;background:var(--card);padding:.4rem .6rem}
        .icon{width:1.3em;height:1.3em;vertical-align:-.28em;margin-right:.4rem;flex:none}button.scene .icon{margin-right:.35rem}
        .rooms-flow{columns:17rem;column-gap:1rem}.rooms-flow .grid{display:block}.rooms-flow .card{break-inside:avoid}
        .rooms-flow h2{break-after:avoid;margin-top:.2rem}.rooms-flow .room{margin-bottom:1rem}
        @media (max-width:30rem){main{padding:.6rem}.grid{grid-template-columns:1fr}}
        """

    /// Live values over server-sent events, and forms sent in the background with their answer shown.
    static let script = """
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
        """
}

/// The page's stylesheet, script and icon.
enum AssetRoutes {
    static var collection: RouteCollection<WebRequestContext> {
        let routes = RouteCollection(context: WebRequestContext.self)
        routes.get("/static/app.css") { _, _ in Response.asset(Assets.stylesheet, type: "text/css; charset=utf-8") }
        routes.get("/static/app.js") { _, _ in Response.asset(Assets.script, type: "text/javascript; charset=utf-8") }
        routes.get("/favicon.svg") { _, _ in Response.asset(CategoryIcons.favicon, type: "image/svg+xml") }
        return routes
    }
}
