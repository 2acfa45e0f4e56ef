package wire

// SASL mechanism names (§5.3.3.1).
const (
	MechanismAnonymous Symbol = "ANONYMOUS"
	MechanismPlain     Symbol = "PLAIN"
	MechanismExternal  Symbol = "EXTERNAL"
	// MechanismMSSBCBS is Service Bus's own: no credentials in the SASL
	// layer, a token put on $cbs afterwards. Microsoft's C stack (uamqp)
	// and older Microsoft clients insist on it.
	MechanismMSSBCBS Symbol = "MSSBCBS"
)

// SASLCode is the outcome of a SASL exchange (§5.3.3.6).
type SASLCode uint8

// SASL outcome codes.
const (
	SASLOK      SASLCode = 0 // authentication succeeded
	SASLAuth    SASLCode = 1 // bad credentials
	SASLSys     SASLCode = 2 // system error
	SASLSysPerm SASLCode = 3 // permanent system error
	SASLSysTemp SASLCode = 4 // transient system error
)

// SASLMechanisms lists the mechanisms the server supports (§5.3.3.1).
type SASLMechanisms struct {
	Mechanisms []Symbol
}

// SASLInit selects a mechanism and carries the initial response
// (§5.3.3.2); for PLAIN, "\x00user\x00password".
type SASLInit struct {
	Mechanism       Symbol
	InitialResponse []byte
	Hostname        string
}

// SASLChallenge is a security challenge (§5.3.3.3).
type SASLChallenge struct {
	Challenge []byte
}

// SASLResponse answers a challenge (§5.3.3.4).
type SASLResponse struct {
	Response []byte
}

// SASLOutcome ends the SASL exchange (§5.3.3.5).
type SASLOutcome struct {
	Code           SASLCode
	AdditionalData []byte
}

func (m *SASLMechanisms) appendTo(b []byte) ([]byte, error) {
	b, c := beginComposite(b, descSASLMechanisms)
	// The field is mandatory: an empty list is still written.
	b = c.done(AppendSymbolArray(b, m.Mechanisms))
	return c.end(b), nil
}

func (m *SASLInit) appendTo(b []byte) ([]byte, error) {
	b, c := beginComposite(b, descSASLInit)
	b = c.symbol(b, m.Mechanism, true)
	b = c.binary(b, m.InitialResponse, m.InitialResponse != nil)
	b = c.str(b, m.Hostname, m.Hostname != "")
	return c.end(b), nil
}

func (m *SASLChallenge) appendTo(b []byte) ([]byte, error) {
	b, c := beginComposite(b, descSASLChallenge)
	b = c.binary(b, m.Challenge, true)
	return c.end(b), nil
}

func (m *SASLResponse) appendTo(b []byte) ([]byte, error) {
	b, c := beginComposite(b, descSASLResponse)
	b = c.binary(b, m.Response, true)
	return c.end(b), nil
}

func (m *SASLOutcome) appendTo(b []byte) ([]byte, error) {
	b, c := beginComposite(b, descSASLOutcome)
	b = c.ubyte(b, uint8(m.Code), true)
	b = c.binary(b, m.AdditionalData, m.AdditionalData != nil)
	return c.end(b), nil
}

func readSASLMechanisms(d *Decoder) (*SASLMechanisms, error) {
	f, err := d.readCompositeList("sasl-mechanisms")
	if err != nil {
		return nil, err
	}
	m := new(SASLMechanisms)
	f.required(field(&f, &m.Mechanisms, (*Decoder).ReadSymbols), "sasl-server-mechanisms")
	return m, f.finish()
}

func readSASLInit(d *Decoder) (*SASLInit, error) {
	f, err := d.readCompositeList("sasl-init")
	if err != nil {
		return nil, err
	}
	m := new(SASLInit)
	f.required(field(&f, &m.Mechanism, (*Decoder).ReadSymbol), "mechanism")
	field(&f, &m.InitialResponse, (*Decoder).ReadBinary)
	field(&f, &m.Hostname, (*Decoder).ReadString)
	return m, f.finish()
}

func readSASLChallenge(d *Decoder) (*SASLChallenge, error) {
	f, err := d.readCompositeList("sasl-challenge")
	if err != nil {
		return nil, err
	}
	m := new(SASLChallenge)
	f.required(field(&f, &m.Challenge, (*Decoder).ReadBinary), "challenge")
	return m, f.finish()
}

func readSASLResponse(d *Decoder) (*SASLResponse, error) {
	f, err := d.readCompositeList("sasl-response")
	if err != nil {
		return nil, err
	}
	m := new(SASLResponse)
	f.required(field(&f, &m.Response, (*Decoder).ReadBinary), "response")
	return m, f.finish()
}

func readSASLOutcome(d *Decoder) (*SASLOutcome, error) {
	f, err := d.readCompositeList("sasl-outcome")
	if err != nil {
		return nil, err
	}
	m := new(SASLOutcome)
	var code uint8
	f.required(field(&f, &code, (*Decoder).ReadUbyte), "code")
	m.Code = SASLCode(code)
	field(&f, &m.AdditionalData, (*Decoder).ReadBinary)
	return m, f.finish()
}
