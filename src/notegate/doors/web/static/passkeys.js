// The console's WebAuthn ceremonies. The server decides everything: this script only carries the server's
// options to navigator.credentials and the authenticator's answer back (with the page's CSRF token).
"use strict";

(function () {
  function status(text, rule) {
    var el = document.getElementById("status");
    el.textContent = text;
    el.setAttribute("data-rule", rule || "");
  }

  async function post(url, csrf, body) {
    var response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
      body: JSON.stringify(body || {}),
    });
    var data = await response.json();
    if (!response.ok) {
      var error = new Error(data.error || "refused");
      error.rule = data.rule || "unknown";
      throw error;
    }
    return data;
  }

  async function run(section) {
    var kind = section.getAttribute("data-ceremony");
    var csrf = section.getAttribute("data-csrf");
    var nameField = document.getElementById("name");
    status("Waiting for your passkey…", "");
    var options = await post(section.getAttribute("data-options"), csrf);
    var credential;
    if (kind === "login") {
      credential = await navigator.credentials.get({
        publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
      });
    } else {
      credential = await navigator.credentials.create({
        publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options),
      });
    }
    var answer = await post(section.getAttribute("data-verify"), csrf, {
      credential: credential.toJSON(),
      name: nameField ? nameField.value : null,
      next: section.getAttribute("data-next"),
    });
    status("Done.", "ok");
    window.location.assign(answer.redirect);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var section = document.getElementById("ceremony");
    if (!section) return;
    if (!window.PublicKeyCredential || !PublicKeyCredential.parseRequestOptionsFromJSON) {
      status("This browser cannot use passkeys here.", "browser-unsupported");
      return;
    }
    var go = document.getElementById("go");
    go.addEventListener("click", function () {
      run(section).catch(function (error) {
        status(error.message, error.rule || "browser:" + (error.name || "error"));
      });
    });
    // The button is disabled in the page until here: a click before this script ran would do nothing.
    go.disabled = false;
  });
})();
