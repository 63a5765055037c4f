#ifndef HOMEGATE_COPENSSL_SHIM_H
#define HOMEGATE_COPENSSL_SHIM_H

/* OpenSSL's libcrypto (Debian's libssl-dev): its big numbers, for SRP's modular exponentiation in
 * HomeKit pair setup (Montgomery multiplication, constant time for the secret exponents). */
#include <openssl/bn.h>

#endif
