extension GatewayService: CustomStringConvertible {
    /// What service-lifecycle logs for the service: its name, never the accounts and settings
    /// it holds (the default account is an account).
    package var description: String { "GatewayService" }
}
