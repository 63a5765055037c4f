import Config
import MQTT
import Testing

@testable import Gateway

@Suite("TLS to the broker is verified unless turned off")
struct TLSDefaultTests {
    @Test("mqtts:// verifies the broker's certificate by default, with or without a tls section")
    func verifiedByDefault() throws {
        for yaml in [
            "mqtt:\n  broker: mqtts://hub\n",
            "mqtt:\n  broker: mqtts://hub\n  tls:\n    caFile: /dev/null\n",
        ] {
            let client = try GatewayConfiguration.parse(yaml: yaml, file: "homegate.yml").mqttConfiguration()
            #expect(client.tls?.verifyServer == true, "\(yaml)")
        }
        let plain = try GatewayConfiguration.parse(yaml: "", file: "homegate.yml").mqttConfiguration()
        #expect(plain.tls == nil)
        let off = try GatewayConfiguration.parse(
            yaml: "mqtt:\n  broker: mqtts://hub\n  tls:\n    verifyServer: false\n", file: "homegate.yml"
        ).mqttConfiguration()
        #expect(off.tls?.verifyServer == false, "only an explicit verifyServer: false turns it off")
    }
}
