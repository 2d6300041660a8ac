import type { JWTAlgorithm } from "@lib/common/models/auth.type";
import type { CouchDBConnection, BucketSyncSetting, P2PConnectionInfo } from "./models/setting.type";
import { normaliseP2PConnectionPath, normaliseP2PMaxWirePayloadBytes } from "./models/setting.p2p";

export type RemoteConfigurationResult =
    | { type: "couchdb"; settings: CouchDBConnection }
    | { type: "s3"; settings: BucketSyncSetting }
    | { type: "p2p"; settings: P2PConnectionInfo }
    | { type: "webdav"; settings: never }; // TODO: Define WebDAV settings

// `sls+xxx://` is a non-special scheme per the WHATWG URL spec, which means
// `URL.host`, `URL.username`, and `URL.password` cannot be read or written.
// We therefore parse and build URLs against a proxy special scheme (`https`)
// and swap the prefix in/out via string manipulation.
const PROXY_SCHEME = "https";

function parseSlsUri(uriString: string): { url: URL; subscheme: string } {
    const match = uriString.match(/^sls\+([^:]+):(.*)$/);
    if (!match) {
        throw new Error(`Unsupported URI: ${uriString}`);
    }
    const subscheme = match[1];
    const rest = match[2];
    return { url: new URL(`${PROXY_SCHEME}:${rest}`), subscheme };
}

function withSlsScheme(url: URL, subscheme: string): string {
    const out = url.toString();
    return `sls+${subscheme}:${out.slice(PROXY_SCHEME.length + 1)}`;
}

export class ConnectionStringParser {
    /**
     * Restore settings from URI
     */
    static parse(uriString: string): RemoteConfigurationResult {
        const match = uriString.match(/^sls\+([^:]+):/);
        if (!match) {
            throw new Error(`Unsupported URI: ${uriString}`);
        }
        const subscheme = match[1];

        // P2P keeps the original non-special-scheme parsing because the room ID
        // can contain characters that special-scheme URL hosts cannot represent.
        if (subscheme === "p2p") {
            return {
                type: "p2p",
                settings: this.parseP2P(uriString),
            };
        }

        const { url } = parseSlsUri(uriString);
        switch (subscheme) {
            case "http":
            case "https":
                return {
                    type: "couchdb",
                    settings: this.parseCouchDB(url, subscheme),
                };
            case "s3":
                return {
                    type: "s3",
                    settings: this.parseS3(url),
                };
            default:
                throw new Error(`Unsupported protocol: sls+${subscheme}`);
        }
    }

    /**
     * 設定からURIを生成する
     */
    static serialize(config: RemoteConfigurationResult): string {
        switch (config.type) {
            case "couchdb":
                return this.serializeCouchDB(config.settings);
            case "s3":
                return this.serializeS3(config.settings);
            case "p2p":
                return this.serializeP2P(config.settings);
            default:
                throw new Error(`Unsupported type: ${config.type}`);
        }
    }

    private static parseCouchDB(url: URL, originalScheme: string): CouchDBConnection {
        return {
            couchDB_URI: `${originalScheme}://${url.host}${url.pathname === "/" ? "" : url.pathname}`,
            couchDB_USER: decodeURIComponent(url.username),
            couchDB_PASSWORD: decodeURIComponent(url.password),
            couchDB_DBNAME: url.searchParams.get("db") || "",
            couchDB_CustomHeaders: url.searchParams.get("headers") || "",
            useJWT: url.searchParams.get("useJWT") === "true",
            jwtAlgorithm: (url.searchParams.get("jwtAlg") as JWTAlgorithm) || "",
            jwtKey: url.searchParams.get("jwtKey") || "",
            jwtKid: url.searchParams.get("jwtKid") || "",
            jwtSub: url.searchParams.get("jwtSub") || "",
            jwtExpDuration: parseInt(url.searchParams.get("jwtExp") || "5"),
            useRequestAPI: url.searchParams.get("useRequestAPI") === "true",
        };
    }

    private static serializeCouchDB(settings: CouchDBConnection): string {
        const url = new URL(settings.couchDB_URI);
        const subscheme = url.protocol.replace(":", "");
        // Build the URL using the standard scheme so username/password setters work,
        // then swap it for the sls+scheme prefix at the end.
        const newUrl = new URL(`${PROXY_SCHEME}://${url.host}${url.pathname}`);
        newUrl.username = encodeURIComponent(settings.couchDB_USER);
        newUrl.password = encodeURIComponent(settings.couchDB_PASSWORD);
        newUrl.searchParams.set("db", settings.couchDB_DBNAME);
        if (settings.couchDB_CustomHeaders) newUrl.searchParams.set("headers", settings.couchDB_CustomHeaders);
        if (settings.useJWT) {
            newUrl.searchParams.set("useJWT", "true");
            newUrl.searchParams.set("jwtAlg", settings.jwtAlgorithm);
            if (settings.jwtKey) newUrl.searchParams.set("jwtKey", settings.jwtKey);
            if (settings.jwtKid) newUrl.searchParams.set("jwtKid", settings.jwtKid);
            if (settings.jwtSub) newUrl.searchParams.set("jwtSub", settings.jwtSub);
            newUrl.searchParams.set("jwtExp", `${settings.jwtExpDuration || 5}`);
        }
        if (settings.useRequestAPI) newUrl.searchParams.set("useRequestAPI", "true");
        return withSlsScheme(newUrl, subscheme);
    }

    private static parseS3(url: URL): BucketSyncSetting {
        const endpoint = url.searchParams.get("endpoint") || `https://${url.host}`;
        return {
            accessKey: decodeURIComponent(url.username),
            secretKey: decodeURIComponent(url.password),
            endpoint,
            bucket: url.searchParams.get("bucket") || "",
            region: url.searchParams.get("region") || "auto",
            bucketPrefix: url.searchParams.get("prefix") || "",
            useCustomRequestHandler: url.searchParams.get("useProxy") === "true",
            bucketCustomHeaders: url.searchParams.get("headers") || "",
            forcePathStyle: url.searchParams.get("pathStyle") !== "false",
        };
    }

    private static serializeS3(settings: BucketSyncSetting): string {
        const url = new URL(settings.endpoint);
        const newUrl = new URL(`${PROXY_SCHEME}://${url.host}`);
        newUrl.username = encodeURIComponent(settings.accessKey);
        newUrl.password = encodeURIComponent(settings.secretKey);
        newUrl.searchParams.set("endpoint", settings.endpoint);
        newUrl.searchParams.set("bucket", settings.bucket);
        newUrl.searchParams.set("region", settings.region);
        if (settings.bucketPrefix) newUrl.searchParams.set("prefix", settings.bucketPrefix);
        if (settings.bucketCustomHeaders) newUrl.searchParams.set("headers", settings.bucketCustomHeaders);
        if (settings.useCustomRequestHandler) newUrl.searchParams.set("useProxy", "true");
        if (!settings.forcePathStyle) newUrl.searchParams.set("pathStyle", "false");
        return withSlsScheme(newUrl, "s3");
    }

    private static parseP2P(uriString: string): P2PConnectionInfo {
        const match = uriString.match(/^sls\+p2p:\/\/([^?#]+)(?:\?([^#]*))?(?:#(.*))?$/);
        if (!match) {
            throw new Error(`Invalid P2P URI: ${uriString}`);
        }
        const authority = match[1];
        const queryString = match[2] || "";

        let userinfo = "";
        let host = authority;
        const lastAtIndex = authority.lastIndexOf("@");
        if (lastAtIndex !== -1) {
            userinfo = authority.slice(0, lastAtIndex);
            host = authority.slice(lastAtIndex + 1);
        }

        let password = "";
        if (userinfo) {
            const colonIndex = userinfo.indexOf(":");
            if (colonIndex !== -1) {
                password = userinfo.slice(colonIndex + 1);
            }
        }

        const searchParams = new URLSearchParams(queryString);
        return {
            P2P_Enabled: searchParams.get("enabled") !== "false",
            P2P_roomID: decodeURIComponent(host),
            P2P_passphrase: decodeURIComponent(password),
            P2P_relays: searchParams.get("relays") || "",
            P2P_AppID: searchParams.get("appId") || "self-hosted-livesync",
            P2P_AutoStart: searchParams.get("autoStart") === "true",
            P2P_AutoBroadcast: searchParams.get("autoBroadcast") === "true",
            P2P_turnServers: searchParams.get("turnServers") || "",
            P2P_turnUsername: searchParams.get("turnUser") || "",
            P2P_turnCredential: searchParams.get("turnPass") || "",
            P2P_maxWirePayloadBytes: normaliseP2PMaxWirePayloadBytes(Number(searchParams.get("maxWirePayloadBytes"))),
            P2P_connectionPath: normaliseP2PConnectionPath(searchParams.get("connectionPath")),
        };
    }

    private static serializeP2P(settings: P2PConnectionInfo): string {
        const searchParams = new URLSearchParams();
        if (!settings.P2P_Enabled) searchParams.set("enabled", "false");
        searchParams.set("relays", settings.P2P_relays);
        searchParams.set("appId", settings.P2P_AppID);
        if (settings.P2P_AutoStart) searchParams.set("autoStart", "true");
        if (settings.P2P_AutoBroadcast) searchParams.set("autoBroadcast", "true");
        if (settings.P2P_turnServers) searchParams.set("turnServers", settings.P2P_turnServers);
        if (settings.P2P_turnUsername) searchParams.set("turnUser", settings.P2P_turnUsername);
        if (settings.P2P_turnCredential) searchParams.set("turnPass", settings.P2P_turnCredential);
        searchParams.set(
            "maxWirePayloadBytes",
            String(normaliseP2PMaxWirePayloadBytes(settings.P2P_maxWirePayloadBytes))
        );
        searchParams.set("connectionPath", normaliseP2PConnectionPath(settings.P2P_connectionPath));

        const credentials = settings.P2P_passphrase ? `:${encodeURIComponent(settings.P2P_passphrase)}@` : "";
        const host = encodeURIComponent(settings.P2P_roomID);
        const query = searchParams.toString() ? `?${searchParams.toString()}` : "";
        return `sls+p2p://${credentials}${host}${query}`;
    }
}
