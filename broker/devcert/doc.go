// Package devcert gives a local listener TLS without ceremony: a local
// certificate authority and a leaf certificate for localhost, 127.0.0.1 and
// ::1, made on first use in a directory, reused after, and renewed from the
// same authority before the leaf expires (at open and while serving).
//
// The directory holds four PEM files: ca.pem (the authority's certificate,
// the one file clients must trust), ca-key.pem, cert.pem and key.pem. Keys
// are written with mode 0600, every file through a temporary file and a
// rename, so a crash never leaves half a key. An authority that is
// unreadable or half present is an error, never silently replaced: a user
// may have trusted it.
package devcert
