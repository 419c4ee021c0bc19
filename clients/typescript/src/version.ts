/** This package's version: the same number as the gateway's (`meta_gateway --version`, `rpc.discover`). */
export const VERSION = "0.1.0";
