/* libqrencode (Debian's libqrencode-dev): the QR code of a HomeKit bridge's setup payload. */
#include <qrencode.h>
