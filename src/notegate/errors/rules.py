"""The registry of refusal rules: each rule's name, its remedy and its HTTP status, in one place.

Why a module of its own: the exception family (:mod:`notegate.errors`) is a few small classes a reader takes
in at a glance; the registry is data, several hundred rows that grow with every new refusal. Kept apart, each
reads as one job: the family says *how* a refusal is carried to a door, the registry *what* each rule tells
the caller to do instead and which HTTP status it answers with (STYLE.md habit 16: one row per rule, a raise
site passes facts only).  :mod:`notegate.errors` re-exports everything here, so ``from notegate.errors import
RULES`` keeps working; this module imports nothing of the package, so the family can import it.
"""

from __future__ import annotations

# The one registry of refusal rules: every rule any door, service or gate refuses with is named here, with
# what the caller can do instead (used when the refusal itself names no remedy). A test scans the source
# for every rule raised and checks that it is registered, and that nothing registered is dead.
RULES: dict[str, str] = {
    # -- the caller and the environment
    "unauthenticated": "Send Authorization: Bearer <token> (notegate token create prints one).",
    "token-revoked": "This token was revoked; ask the owner for a new one.",
    "unknown-environment": "Omit the environment argument to use your own.",
    "wrong-environment": "Mint a token for an environment this server serves (token create --environment NAME).",
    "unknown-tier": "Ask the owner to mint the token again with --tier restricted or trusted.",
    "machine-no-mcp": "Machines use contracts: POST /contracts/NAME (GET /contracts lists them), never the "
    "knowledge tools.",
    "session-handle-missing": "Call session_start first and pass its handle to every other tool.",
    "session-handle-unknown": "Call session_start again and pass the new handle.",
    "session-handle-expired": "Call session_start again and pass the new handle.",
    "session-handle-foreign": "Call session_start yourself and pass your own handle.",
    # -- device keys (a header that does not count leaves the caller restricted; reads still work)
    "device-not-verified": "Run `notegate device header` on a machine whose key is in [devices.*] of the config.",
    "device-wrong-class": "Use the device header with a workstation token (notegate token create --class workstation).",
    "device-wrong-person": "Use the device with a token of the person named in its [devices.NAME] person.",
    "device-key-exists": "Keep the existing key, or pick another device name (remove the old file by hand first).",
    "device-key-unknown": "Name the key with --name, or create one with `notegate device keygen NAME`.",
    "device-name-invalid": "Use lowercase letters, digits, - and _ (at most 63 characters), e.g. laptop.",
    "device-lifetime-invalid": "Pass --lifetime between 1 and 43200 seconds (12 h).",
    "device-audience-missing": "Pass --url (the server's URL), or run it as Claude Code's headersHelper.",
    # -- the policy
    "policy-denied": "Ask the owner for a trusted session.",
    "no-such-note": "Check the path with list_notes or search_notes.",
    "no-such-folder": "List the whole vault with list_notes(folder='') to see its folders.",
    "restricted-outside-inbox": "Use inbox_write(kind, text, project); a reviewer then promotes or holds it. For "
    "anything else, ask the owner for a trusted session.",
    "inbox-append-only": "Use inbox_write to add to the item; a reviewer decides the rest.",
    "inbox-reserved": "Leave it to the server and the reviewers; use inbox_write for your own items.",
    "instruction-file-name": "Choose another name (for an inbox item, another project name or title).",
    "review-trusted-only": "Write to the inbox with inbox_write; a trusted session reviews it.",
    "author-cannot-promote": "Leave it for another connector login, or hold it.",
    "floor-hold": "Nobody overrides the floor over MCP: hold it with hold_inbox, or delete it.",
    "no-route": "Hold it, or move it by hand as a trusted session.",
    "bad-route-key": "Use a lowercase project or slug name.",
    "route-protected": "Point routes at ordinary folders such as handoffs/, log/ or design/.",
    "route-target-malformed": "Fix the target note's structure as a trusted session, then promote again.",
    "base-expression-invalid": "Fix the expression in the .base file (Obsidian's Bases syntax); the view says "
    "which one.",
    "base-expression-unsupported": "Open the base in Obsidian: the console does not evaluate this function.",
    "base-unreadable": "Fix the .base file's YAML (plain mappings and lists, no anchors, under 64 KiB).",
    "two-step-required": "Call again with confirmed=false, show the diff, then repeat with confirmed=true.",
    "write-quota": "Try again later, or ask the owner for a trusted session.",
    "task-cap": "Fix what the caller sends; its open task notes and the audit rows already say what was dropped.",
    # -- paths
    "path-invalid": "Use a relative POSIX path inside the vault, made of visible segments, ending in .md.",
    "path-absolute": "Use a path relative to the vault root.",
    "path-backslash": "Separate folders with /.",
    "path-control-char": "Remove the control characters from the path.",
    "path-empty": "Name a note, such as notes/idea.md.",
    "path-empty-segment": "Remove the doubled / from the path.",
    "path-hidden-segment": "Leave hidden files where they are; write notes under visible folders, e.g. notes/idea.md.",
    "path-invisible-char": "Remove the invisible characters from the path.",
    "path-lookalike-separator": "Use a plain / between folders.",
    "path-not-markdown": "Notes end in lowercase .md.",
    "path-not-normalised": "Send the path in Unicode NFC.",
    "path-not-text": "Send the path as text.",
    "path-percent-encoded": "Send the path decoded: notegate never URL-decodes a path.",
    "path-reserved-char": 'Remove < > : " | ? * from the path.',
    "path-reserved-name": "Choose another name: this one is reserved on Windows or by git.",
    "path-segment-space": "Remove the spaces at the start or end of each folder and file name.",
    "path-too-long": "Use a shorter path.",
    "segment-too-long": "Use shorter folder and file names (at most 255 bytes each).",
    "path-trailing-dot": "Remove the dot at the end of the name.",
    "path-traversal": "Stay inside the vault: no . or .. segments.",
    "path-case-collision": "Use the existing note's exact path, or choose a clearly different name.",
    "target-exists": "Choose another path, or delete that note first.",
    # -- arguments, content and revisions
    "bad-argument": "Check the tool's arguments.",
    "bad-project": "Pass project as lowercase letters, digits and hyphens, e.g. 'notegate'.",
    "base-revision-required": "Pass the revision read_note returned, or 'absent' to create a new note.",
    "base-revision-invalid": "Pass the 40-hex revision read_note returned, or 'absent' to create a new note.",
    "unknown-commit": "Pass a commit from note_history.",
    "stale-revision": "Read the note again, redo your change on the current text and pass its revision.",
    "content-invalid": "Send UTF-8 Markdown text.",
    "content-not-utf8": "Send the note as valid Unicode text.",
    "content-binary": "Notes are UTF-8 Markdown; remove the NUL characters.",
    "note-too-large": "Split it into several notes.",
    "busy": "Nothing was written. Try again.",
    # -- the transport
    "request-too-large": "Send a smaller request: no note can be larger than max_note_bytes.",
    "request-body-timeout": "Send the whole request body promptly.",
    "event-stream-not-served": "Use POST /mcp: the tools never call back, so no event stream is needed.",
    "too-many-open-requests": "Wait for your open requests to finish, then try again.",
    "server-busy": "Try again in a moment.",
    "too-many-connections-per-peer": "Close idle connections and reuse one (keep-alive), then retry.",
    "too-many-connections": "Retry in a moment.",
    "too-many-new-connections": "Reuse one connection (keep-alive) instead of opening a new one for each request, "
    "then retry in a second; behind a proxy the owner raises [server] new_connections_per_peer_per_second.",
    "request-head-timeout": "Send the whole request head (request line and headers) at once, then retry.",
    "host-not-allowed": "Connect through localhost, or add the host to [server] allowed_hosts in notegate.toml.",
    # -- the gates
    "gate-rejected": "Nothing was written. Remove what the gate names and try again.",
    "credential-found": "Nothing was written. Replace the secret with a placeholder such as <API_KEY>.",
    "credential-warning": "Nothing was written. Repeat with allow_secret=true only if you mean to commit it.",
    "output-gate": "Nothing was written; the job keeps provenance only.",
    "rescan-failed": "Nothing was written; the job keeps provenance only.",
    "invalid-json": "The model must answer with one JSON value.",
    "not-json": "The model must answer with one JSON value, not prose.",
    "duplicate-json-key": "The model must not repeat a key.",
    "non-finite-number": "The model must not use NaN or Infinity.",
    "number-too-large": "The model must use ordinary numbers.",
    "too-deep": "The model's answer is nested too deeply.",
    "too-large": "The model's answer is too large.",
    "trailing-data": "The model must answer with one JSON value and nothing after it.",
    "unknown-schema": "Use one of the schemas shipped with notegate.",
    "source-not-in-manifest": "Cite only sources the job provided.",
    # -- formats of notes the server rewrites
    "format-invalid": "Fix the note's structure as a trusted session.",
    "front-matter-invalid": "Fix the note's front matter as a trusted session.",
    "format-front-matter": "Fix the note's front matter as a trusted session.",
    "format-sections": "Fix the note's headings as a trusted session.",
    "format-value": "Use a plain, single-line value.",
    "fence-invalid": "The fenced block was changed; read it again from the source.",
    "log-malformed": "Fix the log's structure as a trusted session.",
    "summary-markers": "Restore the Recent sessions markers as a trusted session.",
    "summary-too-long": "Shorten the project summary.",
    # -- models
    "model-none": "Configure a model provider in [models] (see the README).",
    "model-refused": "The model declined; nothing was decided.",
    "model-timeout": "Try again later, or raise [models] timeout_seconds.",
    "model-unavailable": "Check the provider's key and address; nothing was decided.",
    # -- the lab
    "lab-browser-missing": "Install Debian's Chromium (apt-get install -y chromium) and the dev extras.",
    # -- /metrics
    "metrics-unauthenticated": "Scrape from this machine, or send a machine token (token create --class machine).",
    "metrics-not-machine": "Give the scraper its own token: notegate token create --class machine --name prometheus.",
    # -- persons on the web console (passkeys only: there is no password anywhere)
    "person-unknown": "Add the login as owner or member of an environment in notegate.toml, then enrol it.",
    "console-not-owner": "Sign in as the environment's owner, or ask the owner to act on it.",
    "console-revoke-other-environment": "Open the connections page of the environment it belongs to "
    "(/connections?env=NAME) as its owner.",
    "console-bad-query": "Fix the named filter (see the form on the page), or clear the filters.",
    "step-up-required": "Confirm with your passkey (the page's button, PIN or biometric), then do it again.",
    "console-action-unknown": "This console route has no step-up decision: report it; nothing was done.",
    "enrol-link-unknown": "Ask the owner for a new link (notegate owner enroll --login LOGIN).",
    "enrol-link-used": "Each link enrols once; ask the owner for a new one (notegate owner enroll).",
    "enrol-link-expired": "Links live 15 minutes; ask the owner for a new one (notegate owner enroll).",
    "passkey-unknown": "Use a passkey enrolled on this server (notegate owner list), or enrol a new one.",
    "passkey-user-verification": "Unlock the passkey with its PIN or biometric (user verification), then retry.",
    "passkey-invalid": "Start the passkey step again from the page.",
    "passkey-ceremony-expired": "Reload the page and start the passkey step again.",
    "passkey-last": "Add another passkey first, or revoke this one with `notegate owner revoke ID`.",
    "login-required": "Sign in with your passkey at /login, then open the page again.",
    "csrf-missing": "Reload the page and submit the form again.",
    "csrf-invalid": "Reload the page and submit the form again.",
    "origin-mismatch": "Use the console at its own address; forms from other sites are refused.",
    "web-host-refused": "Open the console at http://localhost:PORT or at the configured public_url.",
    "web-bad-request": "Reload the page and try again.",
    # -- members and invitations (docs/how-to/members.md)
    "member-login-invalid": "Use a lowercase login: letters, digits, '.', '_' or '-' (at most 63).",
    "member-exists": "They are already a member: nothing to invite. Send them the console's address instead.",
    "member-is-owner": "The owner is named in notegate.toml ([environments.NAME] owner); change it there.",
    "member-unknown": "Pick a member listed on the members page of that environment.",
    "member-removed": "Ask the environment's owner to invite you again (console: Members, Invite).",
    "invite-unknown": "Ask the owner for a new invitation (console: Members, Invite).",
    "invite-used": "Each invitation works once; ask the owner for a new one, or sign in at /login.",
    "invite-expired": "Invitations are short-lived; ask the owner for a new one.",
    # -- logging in with an OpenID Connect provider (docs/how-to/members.md)
    "oidc-provider-unknown": "Use a provider listed on the login page ([oidc.NAME] in notegate.toml).",
    "oidc-provider-unavailable": "Check the provider's issuer URL and that it answers (notegate doctor checks its "
    "discovery and keys), then try again.",
    "oidc-busy": "Too many logins are under way at once; try again in a minute.",
    "oidc-state-unknown": "Start the login again from the login page (a login link works once, for a few minutes).",
    "oidc-provider-error": "The provider refused the login; try again, or ask its administrator.",
    "oidc-token-invalid": "Start the login again; if it persists, check the provider's signing keys (notegate doctor).",
    "oidc-algorithm": "Let the provider sign ID tokens with an algorithm notegate accepts (RS256, ES256, EdDSA), "
    "or set [oidc.NAME] algorithms.",
    "oidc-key-unknown": "Start the login again; if it persists, check the provider's jwks_uri (notegate doctor).",
    "oidc-issuer": "Set [oidc.NAME] issuer to exactly the provider's issuer (its discovery document's 'issuer').",
    "oidc-audience": "Set [oidc.NAME] client_id to the client the provider issues tokens for.",
    "oidc-expired": "Start the login again (and check that this server's clock is right).",
    "oidc-issued-in-future": "Check this server's clock and the provider's, then start the login again.",
    "oidc-nonce": "Start the login again from the login page, in the same browser.",
    "oidc-replayed": "Start the login again: each ID token is used once.",
    "oidc-subject-unknown": "Ask the environment's owner for an invitation, and open it to link this account.",
    "oidc-identity-taken": "This provider account is already linked to another person; ask the owner.",
    "step-up-login-stale": "Log in again with the provider now (the page's button), or confirm with your passkey.",
    "step-up-second-factor-unproven": "Confirm with your passkey instead, or let the provider send amr/acr "
    "proving a second factor and list it in [oidc.NAME] second_factor_amr or second_factor_acr.",
    # -- start-up and set-up
    "port-in-use": "Stop what holds it (ss -ltnp shows who), or choose another: notegate serve --port N, or "
    "make run PORT=N.",
    "setup-token-missing": "Pass --config with the server's notegate.toml to mint one, or --token-file with a "
    "token from notegate token create.",
    "setup-conflict": "Remove or edit that entry yourself, or run notegate setup with --remove first.",
    "setup-not-done": "Nothing to undo: run notegate setup CLIENT first.",
    "setup-client-failed": "Run that command by hand to read the client's whole message, fix it, then run "
    "notegate setup again; the steps before it were undone.",
    "token-name-taken": "Pick another --name, or revoke the old token first (notegate token revoke NAME).",
    "token-machine-tier": "Mint a new token with the class it should have; a machine token's tier is its class's.",
    "token-output-failed": "No token was created. Choose a file in a folder you can write to, or leave out "
    "--output to print the token.",
    "config-invalid": "Fix the named key in notegate.toml.",
    "client-settings-invalid": "Fix the named key in client.toml (or NOTEGATE_URL / NOTEGATE_TOKEN).",
    "hook-server-unavailable": "Check that the notegate server is up and that url in client.toml names it.",
    "init-refused": "Choose an empty directory.",
    "origin-unavailable": "Nothing was acknowledged. Check that the origin is reachable, then try again.",
    "state-unavailable": "Check that the PostgreSQL server in [state] url is running and reachable, and that its "
    "user may connect (the server's log names the cause); or remove url to use SQLite in state_dir.",
    "disk-full": "Reads still work. Free space on that disk (`notegate doctor` names it and what is free), then read "
    "the note again and write: no restart is needed.",
    "origin-refused": "Nothing was written. The owner repairs the origin (git revert the refused commits, or "
    "force-push it back to the last good commit; list_inbox shows the task); writes work again after the next fetch.",
    # -- machine contracts (POST /contracts/NAME with a machine token)
    "contract-not-for-conversations": "Conversations use the MCP tools at /mcp; contracts are for machine tokens "
    "(notegate token create --class machine --contract NAME).",
    "no-such-contract": "GET /contracts lists the contracts this token may call; ask the owner for a machine token "
    "given that contract (notegate token create --class machine --contract NAME).",
    "contract-body-not-json": "Send one JSON object as the body (Content-Type: application/json).",
    "contract-body-too-large": "Send a smaller body: GET /contracts names each contract's limit.",
    "contract-input-invalid": "Fix the field the error names (its JSON pointer) to match the contract's schema "
    "(GET /contracts shows it).",
    "idempotency-conflict": "Nothing was written. Send the same input again for this key, or other input under a "
    "new key (another marker or day).",
    "health-unknown-metric": "Send only the metrics the vault records (the schema's name pattern; GET /contracts).",
    "health-implausible-value": "Check the exporter's scale and unit; the value was not recorded.",
    "health-unit-unconvertible": "Send the value in a unit that converts to the one the vault records "
    "(GET /contracts lists them); it was not recorded.",
    # -- OAuth (the authorization server for hosted clients)
    "redirect-not-registered": "Use a redirect URI exactly as the client registered it (or as its metadata "
    "document lists it).",
    "redirect-not-allowed": "Use a redirect URI the policy allows (oauth_redirect_allowlist), or ask the owner "
    "to add it.",
    "pkce-required": "Send code_challenge with code_challenge_method=S256 (plain is not accepted).",
    "registration-cap": "Reuse an existing registration. The owner can revoke connectors no longer used on the "
    "console's Connections page (their registrations are swept once they hold no live token and went unused for "
    "oauth_unused_registration_seconds) or raise [policy] oauth_max_registrations in notegate.toml.",
    # -- what an anonymous caller may cost (auth/anonymous.py, auth/cimd_pool.py)
    "rate-limited": "Wait the seconds the Retry-After header says, then retry; an owner who needs more raises "
    "[server] anonymous_requests_per_minute or registrations_per_hour.",
    "rate-limit-full": "Retry after the seconds the Retry-After header says.",
    "oauth-field-too-long": "Send a shorter value (the limits are in docs/explanation/security-model.md, "
    '"What an anonymous caller can cost"); nothing was stored.',
    "oauth-body-too-large": "Send the form or registration alone, without padding; nothing was stored.",
    "cimd-busy": "Retry in a moment (the Retry-After header says when); the metadata document is fetched once "
    "and then cached.",
    # -- elevation (a restricted session asks, the owner approves with a passkey)
    "elevation-not-needed": "Go ahead: this caller is already trusted.",
    "elevation-pending-cap": "Wait for the owner to answer (or let the open links expire after 10 minutes).",
    "elevation-reason-invalid": "Say in one line (at most 500 characters) what you want to do and why.",
    "elevation-unknown": "Call request_elevation again for a new link and code.",
    "elevation-approver-not-owner": "Only the environment's owner approves an elevation there; ask the owner "
    "to open the link (or the elevations page) and approve it.",
    "elevation-deny-wrong-person": "Only the person whose session asked, or the environment's owner, may deny it.",
    "elevation-assertion-unverified": "Approve again with your passkey, unlocking it with its PIN or biometric.",
    "elevation-assertion-stale": "Approve again: the page asks your passkey for a fresh assertion.",
    "grant-unknown": "Call again without grant, or call request_elevation and show the link and code to the owner.",
    "grant-pending": "Wait until the owner approved the link, then call again with the grant (or without it).",
    "grant-revoked": "Call again without grant, or call request_elevation again.",
    "grant-expired": "Call again without grant, or call request_elevation again.",
    "grant-other-connector": "Use a grant from request_elevation of this connector, or call again without grant.",
    "grant-other-conversation": "Call request_elevation from this conversation, or call again without grant.",
    "consent-unknown": "Start the connection again from the client: the request is unknown or expired.",
    "consent-answered": "Start the connection again from the client: this request was already answered.",
    "consent-no-environment": "Ask the owner to add you to an environment (owner or members in notegate.toml).",
    "cimd-invalid": "Serve the client metadata document as https JSON whose client_id equals its URL.",
    "cimd-unreachable": "Check that the client metadata document is served over https, without redirects, "
    "quickly and under 10 KB.",
    "cimd-private-address": "Serve the client metadata document from a public address, or name the host in "
    "[server] cimd_private_hosts.",
    # -- the git door (incoming commits: the pre-receive hook, fetch, sync)
    "incoming-hidden-path": "Remove it from the commit (keep .obsidian/ and other hidden files local; add them to "
    ".gitignore), then push again.",
    "incoming-symlink": "Commit the file itself instead of a link to it.",
    "incoming-submodule": "Remove the submodule and .gitmodules; copy the notes in instead.",
    "incoming-executable": "Clear the executable bit (git update-index --chmod=-x PATH) and commit again.",
    "incoming-mode": "Commit it as a plain file (mode 100644).",
    "incoming-malformed": "Push commits made by git itself; this object cannot be read as a commit or tree.",
    "protected-floor-hold": "Remove the invisible characters or instruction-file names the floor names, then push "
    "again; or write the note through an inbox item and let a reviewer decide.",
    "push-non-fast-forward": "Fetch, rebase or merge onto the origin's branch, then push without --force.",
    "push-forged-provenance": "Reword the commit: no Notegate-* trailer (in any spelling) and an author and "
    "committer e-mail of your own (not <login>@notegate nor notegate@localhost); only the server names who made "
    "its commits. To repair an origin that took one, force-push it back to the server's last good commit.",
    "too-many-deletions": "Delete fewer notes in one push (splitting them over commits of one push does not "
    "help: the count is over the whole push), or raise max_deletions_per_commit.",
    "too-many-files": "Add fewer files in one push (the count is over the whole push, not per commit), or raise "
    "max_files_per_commit.",
    "too-many-commits": "Push fewer commits at once (push the history in parts, oldest first), or raise "
    "max_commits_per_push.",
    "incoming-too-slow": "Push fewer or smaller commits at once, or raise push_inspection_seconds.",
    "push-unreferenced-object": "Push with git itself (git push sends only what the pushed commits name); drop "
    "objects no pushed commit names.",
    "push-too-large": "Push less at once (several pushes), or raise max_push_bytes (and receive.maxInputSize on "
    "the origin: `notegate hooks install` sets it).",
    "file-type-refused": "Commit notes (.md) and attachments of the types in attachment_types only.",
    "attachment-too-large": "Commit a smaller file, or raise max_attachment_bytes.",
    "attachment-type-mismatch": "Give the file the extension of what it really is, or leave it out.",
    "import-policy-folder": "Import with --into FOLDER to keep the vault's folders apart from the policy's, or "
    "with --allow-policy-folders if they are meant as the policy's.",
    "import-exists": "Rename one of the two, or change the vault's copy first: an import never overwrites.",
    "attachment-write-trusted": "Describe the file in an inbox item (inbox_write), or ask the owner for a trusted "
    "session (request_elevation).",
    "attachment-writes-off": "Add the file from a clone with git, or ask the owner to set attachment_writes = true.",
    "path-not-attachment": "Name the file with its extension, e.g. 'images/diagram.png'; read notes with read_note.",
    "attachment-not-base64": "Send the file's bytes as standard base64 (RFC 4648, with padding).",
    "push-not-a-branch": "Push branches only (refs/heads/...); keep tags and other refs elsewhere.",
    "push-delete-default-branch": "Keep the default branch; delete other branches only.",
    "task-owner-only": "Task notes (a refused fetch) are listed to the environment's owner in a trusted session.",
    "push-protected-path": "Leave what sessions load at start (the area named above) to the owner: write an "
    "inbox item for a reviewer, or ask the owner to push it.",
    # -- backups and restores (notegate backup / restore)
    "backup-recipient-invalid": "Pass the age public key (age1...) that `age-keygen -y IDENTITY_FILE` prints.",
    "backup-failed": "Nothing was kept of this backup. Check the named repository with `notegate doctor`, then "
    "run the backup again.",
    "backup-no-identity": "Pass --identity FILE: the age identity (AGE-SECRET-KEY-...) the backup was encrypted to.",
    "backup-identity-invalid": "Pass a file holding one age identity line (AGE-SECRET-KEY-...), as age-keygen "
    "writes it.",
    "backup-wrong-identity": "Pass the identity whose public key was the --recipient of this backup.",
    "backup-manifest-invalid": "Restore from a folder written by `notegate backup` (it holds manifest.json), "
    "or from another copy of that backup.",
    "backup-manifest-newer": "Restore it with the notegate version that wrote it (the manifest names it), or newer.",
    "backup-file-missing": "Restore from another copy of this backup, or from an older backup.",
    "backup-file-truncated": "Restore from another copy of this backup, or from an older backup.",
    "backup-file-altered": "Restore from another copy of this backup, or from an older backup.",
    "restore-target-not-empty": "Restore into a new or empty directory.",
    "state-url-password": "Leave the password out of the URL: put it in ~/.pgpass (or the file PGPASSFILE names) "
    "or PGPASSWORD in the server's environment; PostgreSQL's client library reads them itself.",
    "state-database-not-empty": "Give this deployment a database of its own (or a schema of its own: "
    "options=-csearch_path%3DNAME in the URL), or empty it first.",
    # -- the tools gateway (notegate tools; docs/how-to/tools-gateway.md)
    "tools-pin-invalid": "Pin one artifact: name==exact-version with sha256:<wheel digest> (PyPI), or "
    "name@exact-version with its sha512 integrity (npm), or registry/name with sha256:<image digest> "
    "(container); never a range, a tag or a branch.",
    "tools-container-engine-missing": "Install and start the container engine [tools] engine names (docker or "
    "podman) where the tools process runs, or remove the container entries from the catalog.",
    "tools-image-missing": "Load the pinned image into the engine first (`docker pull registry/name@sha256:…` or "
    "`docker load -i FILE`): nothing is downloaded at run time.",
    "tools-pin-mismatch": "Check the pin against the registry's published digest; refill the cache with "
    "`make upstream-cache` and never edit a cached artifact by hand.",
    "tools-artifact-missing": "Fill the upstream cache first (`make upstream-cache`, or [tools] cache pointing "
    "at a folder holding the pinned artifact); nothing is downloaded at run time.",
    "tools-install-failed": "Check that the cache holds the package's dependencies too (`make upstream-cache` "
    "fills them), then start the tools process again.",
    "tools-mount-invalid": "Use typed values: lowercase names, a plain account label, UPPERCASE variable names "
    "that no loader or interpreter reads.",
    "tools-mount-exists": "Pick another name, or mount another upstream account.",
    "tools-unknown": "List what exists with `notegate tools catalog` and `notegate tools mount` (no --name).",
    "tools-hidden": "List your tools again: only what your environment and tier allow is there.",
    "tools-write-restricted": "Read with the mount's other tools, or ask the owner for a grant "
    "(request_elevation) and pass it as grant.",
    "tools-token-invalid": "Nothing but the knowledge service calls the tools process, with a token it mints per "
    "call; connect through the one connector at /mcp.",
    "tools-mint-unpinned": "Run `notegate tools mint-key` where notegate serve runs, and start the tools process "
    "with --mint-key=ID (or LoadCredential=notegate-tools-mint:FILE holding it).",
    "tools-upstream-down": "Try again in a minute: the tools process restarts a crashed upstream with backoff "
    "(notegate doctor and /healthz show it).",
    "tools-secret-argument": "Leave credentials out of tool arguments: the mount holds the upstream's own "
    "credentials, sealed.",
    "tools-upstream-timeout": "Ask for less at once, or raise [tools] call_seconds.",
    "tools-oauth-grant-needed": 'Grant it again: the console\'s Tools page, the mount, "Connect" (or '
    "`notegate tools oauth MOUNT`).",
    "tools-oauth-not-remote": "Only a mount of a remote catalog entry (--kind remote) holds an OAuth grant; give a "
    "local upstream its credentials as variables.",
    "tools-oauth-failed": "Check the remote server's address in the catalog and that it is up, then start the "
    "grant again.",
    "tools-oauth-unknown": "Start the grant again from the mount's page (a grant waits 10 minutes, and one started "
    "later replaces it).",
    "tools-upstream-line-too-long": "Ask for less at once; if the upstream's answers are this large by design, "
    "raise [tools] max_line_bytes (the tools process restarts the upstream by itself).",
    "tools-result-too-large": "Ask for less at once, or raise [tools] max_result_bytes.",
    "tools-answer-too-large": "Ask for less at once, or raise [tools] max_answer_bytes (and keep it above "
    "max_result_bytes).",
    "tools-unavailable": "Start the tools process (`notegate tools serve`) and check [tools] url.",
    "tools-seal-key-missing": "Run `notegate tools keygen --output FILE` once and give FILE to the tools process "
    "as its credential file.",
    "tools-credential-unopenable": "Store the credential again (`notegate tools credential set`): it was sealed "
    "to another key than the one this tools process holds.",
    "tools-key-file": "Pass the tools process its key with --key-file FILE, or start it under systemd with "
    "LoadCredential=notegate-tools-key:FILE.",
    # -- notegate sync (a workstation's vault clone; each stop is also written to .git/notegate-sync-stopped)
    "sync-not-a-clone": "Sync a clone of the vault's origin (git clone ORIGIN DIR) with main checked out.",
    "sync-stopped": "Read the reason in DIR/.git/notegate-sync-stopped, fix it, then run `notegate sync --resume DIR`.",
    "sync-conflict": "Make each named note what you want it to be (the origin's version: git -C DIR show "
    "refs/notegate/accepted:PATH), then run `notegate sync --resume DIR`: your file wins on those notes.",
    "sync-incoming-refused": "Repair the origin (move its main back to the last good commit named here, on the "
    "origin itself), then run `notegate sync --resume DIR`.",
    "sync-local-refused": "Restore the notes or fix what is named in your files, then run "
    "`notegate sync --resume DIR` (unpushed commits are rebuilt from your files).",
    "sync-push-refused": "Fix what the origin's hook names in your files, then run `notegate sync --resume DIR` "
    "(unpushed commits are rebuilt from your files).",
    # -- the LiveSync gate (notegate livesync gate): what a device may ask of CouchDB, and its token
    "livesync-unauthenticated": "Turn on Use JWT in LiveSync with the settings `notegate livesync device add` "
    "printed (its Setup URI).",
    "livesync-basic-auth": "Use the device's JWT (Use JWT in LiveSync's remote settings); the gate takes no passwords.",
    "livesync-token-malformed": "Let LiveSync sign the token (Use JWT) with the settings its Setup URI gave it.",
    "livesync-token-key-in-header": "Sign with the enrolled key only; the gate picks the key from the kid.",
    "livesync-device-unknown": "Enrol the device (notegate livesync device add NAME) and import its Setup URI.",
    "livesync-device-revoked": "Enrol the device again (notegate livesync device add NAME) if it is yours.",
    "livesync-wrong-environment": "Use the gate of the device's environment, or enrol it for this one.",
    "livesync-token-algorithm": "Set LiveSync's JWT Algorithm to the one the device was enrolled with "
    "(notegate livesync device list shows it).",
    "livesync-token-signature": "Import the device's Setup URI again: the JWT key is not the enrolled one.",
    "livesync-token-expiry": "Set LiveSync's JWT Expiration Duration to a few minutes (5 by default) and check "
    "the device's clock.",
    "livesync-token-issued-at": "Check the device's clock.",
    "livesync-token-subject": "Set LiveSync's JWT Subject (sub) to the device's kid (notegate livesync device list).",
    "livesync-method": "Use GET, HEAD, POST, PUT or DELETE on a replication route.",
    "livesync-method-override": "Send the method itself; method override headers and parameters are refused.",
    "livesync-path-invalid": "Send the path as PouchDB does: visible ASCII, segments separated by single /.",
    "livesync-path-encoding": "Encode only what must be encoded, once (never %2E, %5F or other unreserved characters).",
    "livesync-encoded-slash": "Name documents with slashes inside a request body (_bulk_get, _bulk_docs), not "
    "in the path.",
    "livesync-double-encoding": "Encode the path once.",
    "livesync-path-traversal": "Remove the . and .. segments.",
    "livesync-query-invalid": "Send a well-formed query string with at most 64 fields.",
    "livesync-server-route": "Devices reach the notes database only; the owner administers CouchDB directly.",
    "livesync-config-read-only": "Change CouchDB's settings as its admin (notegate livesync couchdb-config "
    "prints them); the wizard's warnings about them can be ignored.",
    "livesync-other-database": "Set LiveSync's database name to the notes database the gate serves.",
    "livesync-database-admin": "The owner creates the notes database once, as CouchDB's admin.",
    "livesync-route-not-replication": "Only replication routes are served (see docs/how-to/livesync.md).",
    "livesync-security": "The owner sets the database's members as CouchDB's admin.",
    "livesync-maintenance": "Run maintenance as CouchDB's admin, or ask the owner to allow it on the gate "
    "([livesync] allow_maintenance).",
    "livesync-changes-feed": "Use feed=normal or feed=longpoll.",
    "livesync-design-document": "Leave design documents to the owner; LiveSync's sync needs none.",
    "livesync-reserved-id": "Name ordinary documents only; _local documents go through PUT /db/_local/ID.",
    "livesync-attachment": "Keep LiveSync's default chunked storage; CouchDB attachments are not served.",
    "livesync-body-invalid": "Send the body replication sends for this route.",
    "livesync-body-not-json": "Send one JSON object, without repeated keys (Content-Type: application/json).",
    "livesync-body-too-large": "Lower LiveSync's batch size (Batch size / Batch limit), or ask the owner to "
    "raise [livesync] max_body_bytes.",
    "livesync-upstream-unavailable": "Check that CouchDB is running at [livesync] couchdb_url; try again.",
    "livesync-not-configured": "Add a [livesync] table to notegate.toml (docs/how-to/livesync.md).",
    "livesync-document-unsupported": "Give the bridge the vault's end-to-end encryption passphrase "
    "($NOTEGATE_LIVESYNC_PASSPHRASE or [livesync] passphrase_file; docs/how-to/livesync.md), and keep LiveSync's "
    "default encryption (V2) and storage.",
    "livesync-passphrase-mismatch": "Give the bridge the passphrase the devices use (LiveSync's Passphrase setting); "
    "a device with another passphrase must be set up again from the Setup URI.",
    "livesync-document-incomplete": "Nothing to do: the bridge reads the note again when its chunks arrive.",
    "livesync-device-name-invalid": "Use lowercase letters, digits, - and _ (at most 40 characters), e.g. phone.",
    "livesync-device-exists": "Revoke the old one first (notegate livesync device revoke NAME), or pick another name.",
    "livesync-device-not-found": "List the devices with notegate livesync device list.",
    "livesync-person-not-member": "Name the environment's owner or one of its members with --person.",
}

# Rules built from a family and a detail (a schema pointer, a gate, a floor rule): the family is registered.
RULE_FAMILIES: dict[str, str] = {
    "schema-invalid:": "The model's answer does not match the schema at the named place.",
    "unsafe-content:": "Nothing was written; the named gate refused the content.",
    "rendered-rescan:": "Nothing was written; the job keeps provenance only.",
    "staged-rescan:": "Nothing was written; the job keeps provenance only.",
    "rendered-floor:": "Nothing was written; the floor held the model's text.",
    "staged-floor:": "Nothing was written; the floor held the model's text.",
}


#: The registry's fourth column: a rule's remedy in the words of a reader who acts somewhere else than the
#: registry's remedy assumes (a model calling tools, a person pushing).  Only where the words differ:
#:
#: * ``writer`` -- a write through the recipe (a tool, the console's editor, a contract, import) refused by a
#:   rule the git door shares, whose registered remedy speaks of a push;
#: * ``console`` -- the owner acting on an inbox item in the browser, who holds or deletes it rather than
#:   calling tools.
#:
#: Raise sites look it up with :func:`remedy_in`; no module keeps a remedy table of its own.
AUDIENCE_REMEDIES: dict[str, dict[str, str]] = {
    "writer": {
        "incoming-hidden-path": "Nothing was written. Choose another name: this one is how a file system spells "
        "a hidden name (an 8.3 short name such as obsidi~1 is .obsidian on Windows).",
        "protected-floor-hold": "Nothing was written. Sessions load this note at start: remove the invisible "
        "characters or instruction-file names the floor names, or write it as an inbox item for a reviewer.",
        "too-many-files": "Nothing was written. Commit fewer files at once (at most max_files_per_commit).",
        "too-many-deletions": "Nothing was written. Delete fewer notes at once (at most max_deletions_per_commit).",
    },
    "console": {
        "floor-hold": "The floor holds this item whatever anyone decides: hold it with a reason, or delete it.",
        "no-route": "Items of this kind have no route into the vault: hold it, delete it, or copy what you want "
        "to keep into a note yourself.",
        "stale-revision": "The item changed since the page showed it: read its new text below, then decide again.",
        "author-cannot-promote": "Promote it from another connector login, or hold it.",
        "route-target-malformed": "Fix the target note's structure from the Notes pages, then promote again.",
        "bad-argument": "Say why you hold it.",
    },
}


def remedy_in(audience: str, rule: str) -> str | None:
    """``rule``'s remedy in ``audience``'s words (:data:`AUDIENCE_REMEDIES`), or None where the registry's own
    remedy already says it (then a refusal raised without ``remedy=`` carries the registry's)."""
    return AUDIENCE_REMEDIES[audience].get(rule)


#: The registry's third column: the HTTP status a door answers each rule with (a rule not listed here is
#: 400 Bad Request).  Doors look it up with :func:`http_status`; none keeps a table of its own, so a rule has
#: one status at every door (tests/test_errors_status.py).
HTTP_STATUS: dict[str, int] = {
    # -- credentials and sessions
    "unauthenticated": 401,
    "login-required": 401,
    "metrics-unauthenticated": 401,
    "metrics-not-machine": 403,
    "csrf-missing": 403,
    "csrf-invalid": 403,
    "origin-mismatch": 403,
    "passkey-unknown": 403,
    "passkey-user-verification": 403,
    "person-unknown": 403,
    "console-not-owner": 403,
    "step-up-required": 403,
    "contract-not-for-conversations": 403,
    # -- the owner's inbox, elevations and enrolment
    "floor-hold": 403,
    "author-cannot-promote": 403,
    "elevation-approver-not-owner": 403,
    "elevation-assertion-unverified": 403,
    "elevation-assertion-stale": 403,
    "file-type-refused": 403,
    "no-such-note": 404,
    "no-such-folder": 404,
    "no-such-contract": 404,
    "grant-unknown": 404,
    "consent-unknown": 404,
    "elevation-unknown": 404,
    "enrol-link-unknown": 404,
    "enrol-link-used": 410,
    "enrol-link-expired": 410,
    # -- the request itself
    "event-stream-not-served": 405,
    "request-head-timeout": 408,
    "request-body-timeout": 408,
    "stale-revision": 409,
    "two-step-required": 409,
    "idempotency-conflict": 409,
    "request-too-large": 413,
    "contract-body-too-large": 413,
    "host-not-allowed": 421,
    "contract-input-invalid": 422,
    "credential-found": 422,
    "output-gate": 422,
    # -- load and the server's own state
    "too-many-connections-per-peer": 429,
    "too-many-new-connections": 429,
    "too-many-open-requests": 429,
    "server-busy": 429,
    "write-quota": 429,
    "origin-unavailable": 503,
    "origin-refused": 503,
    "busy": 503,
    "too-many-connections": 503,
    "disk-full": 507,  # Insufficient Storage (RFC 4918): the request may be repeated once space is freed
}


def http_status(rule: str) -> int:
    """The HTTP status of ``rule`` from the registry (400 for a rule with no status of its own)."""
    return HTTP_STATUS.get(rule, 400)


def remedy_for(rule: str) -> str | None:
    """What to do instead of ``rule``, from the registry (None for an unregistered rule)."""
    if rule in RULES:
        return RULES[rule]
    for family, remedy in RULE_FAMILIES.items():
        if rule.startswith(family):
            return remedy
    return None
