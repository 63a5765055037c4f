/// The gateway's payloads are ``JSON`` values; re-export the type so code that builds or reads them
/// needs one import.
@_exported import JSON
