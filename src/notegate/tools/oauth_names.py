"""The names both sides of an upstream OAuth grant agree on: the knowledge service (which relays the owner's
browser and serves the gateway's Client ID Metadata Document) and the tools process (the OAuth client). Kept
apart so the knowledge service imports no code of the tools process's client."""

#: The reserved credential names a mount's grant is sealed under (not variable names: never in an environment).
GRANT = "oauth:grant"
CLIENT = "oauth:client"
#: The path on the knowledge service the authorization server sends the owner's browser back to.
CALLBACK_PATH = "/tools/oauth/callback"
#: The path on the knowledge service that serves the gateway's Client ID Metadata Document (https only).
CLIENT_DOCUMENT_PATH = "/tools/oauth/client.json"
CLIENT_NAME = "notegate tools gateway"
#: The longest value of a relayed field (a code, a state, an issuer, a URL).
MAX_FIELD_CHARS = 2048
