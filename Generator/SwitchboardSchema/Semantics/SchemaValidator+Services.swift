import Foundation
import SwitchboardHTTPSyntax

extension SchemaValidator {
    // MARK: Keys

    mutating func buildKeys() {
        var seen: [String: SourceLocation] = [:]
        // Top-level types by their Swift names (`message session` is `Session`, `Data` is `DataMessage`).
        var topLevelSwiftNames = Set<String>()
        for index in messageSyntax.indices where messages[index].parent == nil { topLevelSwiftNames.insert(messages[index].swiftName) }
        for index in enumSyntax.indices where enums[index].parent == nil { topLevelSwiftNames.insert(enums[index].swiftName) }
        for key in keySyntax {
            checkMemberName(key.name, kind: "key")
            // A key is a parameter of every generated call that takes it.
            let parameter = SwiftNames.jsonName(key.name.text)
            if SwiftNames.isKeyword(parameter) || SwiftNames.callLocals.contains(parameter) {
                diagnostics.error(.invalidIdentifier, "key name '\(key.name.text)' is taken by the generated calls (a Swift keyword, or one of \(SwiftNames.callLocals.sorted().joined(separator: ", "))); choose another", at: key.name.location)
            }
            if let previous = seen[key.name.text] {
                diagnostics.error(.duplicateTypeName, "key '\(key.name.text)' is already declared at \(describe(previous))", at: key.name.location)
                continue
            }
            seen[key.name.text] = key.name.location
            guard let header = key.header else { continue }
            if !isHeaderName(header.text) {
                diagnostics.error(.invalidKey, "'\(header.text)' is not a valid header name", at: header.location)
            } else {
                warnIfNotGRPCMetadata(header)
            }
            var form = KeyDefinition.Form.string
            if let written = key.form {
                guard let parsed = KeyDefinition.Form(rawValue: written.text) else {
                    diagnostics.error(.invalidKey, "unknown key form '\(written.text)'; use 'base64' (bytes), 'string' or 'bearer'", at: written.location)
                    continue
                }
                form = parsed
            }
            let typeName = SwiftNames.uppercaseFirst(key.name.text)
            if typesByPath[typeName] != nil || topLevelSwiftNames.contains(typeName) {
                diagnostics.error(.generatedNameCollision, "key '\(key.name.text)' generates the type '\(typeName)', which a message or enum already uses", at: key.name.location)
            } else if SwiftNames.isReservedTypeName(typeName) {
                diagnostics.error(.generatedNameCollision, "key '\(key.name.text)' generates the type '\(typeName)', which Swift or generated code already uses; choose another name", at: key.name.location)
            }
            keyIndexByName[key.name.text] = keys.count
            keys.append(KeyDefinition(
                name: key.name.text, swiftTypeName: typeName, header: header.text, form: form,
                documentation: key.documentation, location: key.name.location))
        }
    }

    func isHeaderName(_ text: String) -> Bool { HTTPSyntax.isToken(text) }

    /// A token gRPC cannot send: calls that carry it fail over the gRPC transport.
    mutating func warnIfNotGRPCMetadata(_ header: Token) {
        guard !header.text.utf8.allSatisfy(HTTPSyntax.isGRPCKeyByte) else { return }
        diagnostics.warning(.headerNotGRPCMetadata, "'\(header.text)' cannot be gRPC metadata (letters, digits, '-', '_' and '.' only): calls that carry it fail over gRPC", at: header.location)
    }

    // MARK: Services

    mutating func buildServices() {
        var routes: [String: SourceLocation] = [:]
        var rpcNames: [String: SourceLocation] = [:]
        var eventRoutes: [String: SourceLocation] = [:]
        var serviceNames: [String: SourceLocation] = [:]
        // Every type a service generates, and what generated it; keys generate types too.
        var generatedTypes: [String: String] = Dictionary(keys.map { ($0.swiftTypeName, "key '\($0.name)'") }, uniquingKeysWith: { first, _ in first })
        // Top-level types by their Swift names (`message Data` is `DataMessage`), which a
        // service's generated types and its rpcs' error types must neither repeat nor hide.
        // Imported types count when generated code names them unqualified: those of a package
        // generated into this module (no Swift module given) and the well-known types.
        func unqualified(_ package: Int?) -> Bool {
            guard let package else { return true }
            let module = importedPackages[package].swiftModule
            return module == nil || module == WellKnownTypes.swiftModule
        }
        // Imported packages are linked as their types are first named, so the list grows
        // while services are built: it is extended (never rescanned) before each use.
        var topLevelSwiftNames: [String: String] = [:]
        var named = (messages: 0, enums: 0)
        func nameNewTypes() {
            for message in messages[named.messages...] where message.parent == nil && unqualified(message.importedFrom) {
                topLevelSwiftNames[message.swiftName] = topLevelSwiftNames[message.swiftName] ?? "message '\(message.name)'"
            }
            for definition in enums[named.enums...] where definition.parent == nil && unqualified(definition.importedFrom) {
                topLevelSwiftNames[definition.swiftName] = topLevelSwiftNames[definition.swiftName] ?? "enum '\(definition.name)'"
            }
            named = (messages.count, enums.count)
        }
        nameNewTypes()
        for (syntax, file) in serviceSyntax {
            if let previous = serviceNames[syntax.name.text] {
                diagnostics.error(.duplicateTypeName, "service '\(syntax.name.text)' is already declared at \(describe(previous))", at: syntax.name.location)
                continue
            }
            serviceNames[syntax.name.text] = syntax.name.location
            for generated in generatedTypeNames(forService: syntax.name.text) {
                if typesByPath[generated] != nil || topLevelSwiftNames[generated] != nil {
                    diagnostics.error(.generatedNameCollision, "service '\(syntax.name.text)' generates the type '\(generated)', which a message or enum already uses", at: syntax.name.location)
                } else if SwiftNames.isReservedTypeName(generated) {
                    diagnostics.error(.generatedNameCollision, "service '\(syntax.name.text)' generates the type '\(generated)', which Swift or generated code already uses; choose another name", at: syntax.name.location)
                } else if let owner = generatedTypes[generated] {
                    diagnostics.error(.generatedNameCollision, "service '\(syntax.name.text)' generates the type '\(generated)', which \(owner) also generates", at: syntax.name.location)
                }
                generatedTypes[generated] = generatedTypes[generated] ?? "service '\(syntax.name.text)'"
            }
            guard let service = buildService(syntax, file: file) else { continue }
            nameNewTypes()
            for endpoint in service.endpoints {
                // Each rpc's error enum sits in the service's namespace, where it would hide a
                // type of the same name from the service's own code.
                let errorType = SwiftNames.uppercaseFirst(SwiftNames.unescaped(endpoint.swiftName)) + "Error"
                if let owner = topLevelSwiftNames[errorType] ?? generatedTypes[errorType] {
                    diagnostics.error(.generatedNameCollision, "rpc '\(endpoint.name)' generates the type '\(syntax.name.text).\(errorType)', which would hide \(owner) in the service's code; rename the rpc or the type", at: endpoint.location)
                } else if SwiftNames.isReservedTypeName(errorType) {
                    diagnostics.error(.generatedNameCollision, "rpc '\(endpoint.name)' generates the type '\(syntax.name.text).\(errorType)', which would hide the type '\(errorType)' generated code uses; choose another name", at: endpoint.location)
                }
                // One route may be served on both connections (Signal's sealed-sender sends).
                let key = service.auth.rawValue + " " + endpoint.verb + " " + normalizedRoute(endpoint.runtimePathTemplate)
                if let previous = routes[key] {
                    diagnostics.error(.duplicateRoute, "route \(endpoint.verb) \(endpoint.runtimePathTemplate) is already served by the endpoint at \(describe(previous))", at: endpoint.location)
                } else {
                    routes[key] = endpoint.location
                }
                if let previous = rpcNames[endpoint.rpcName] {
                    diagnostics.error(.duplicateRPCName, "RPC name '\(endpoint.rpcName)' is already used by the endpoint at \(describe(previous))", at: endpoint.location)
                } else {
                    rpcNames[endpoint.rpcName] = endpoint.location
                }
            }
            for event in service.events {
                let key = event.verb + " " + event.path
                if let previous = eventRoutes[key] {
                    diagnostics.error(.duplicateRoute, "push route \(key) is already used by the event at \(describe(previous))", at: event.location)
                } else {
                    eventRoutes[key] = event.location
                }
            }
            services.append(service)
        }
        checkModuleNamesStayVisible(serviceNames: serviceNames)
    }

    /// Generated code names an imported package's types through the Swift module it is
    /// generated into (`Contacts.Person`); a top-level type of this schema with that module's
    /// name would be found first, and every such reference would fail to compile.
    mutating func checkModuleNamesStayVisible(serviceNames: [String: SourceLocation]) {
        var modules: [String: String] = [:]
        for package in importedPackages {
            guard let module = package.swiftModule, module != WellKnownTypes.swiftModule else { continue }
            modules[module] = modules[module] ?? package.name
        }
        guard !modules.isEmpty else { return }
        func report(_ what: String, _ name: String, at location: SourceLocation) {
            guard let package = modules[name] else { return }
            diagnostics.error(.generatedNameCollision, "\(what) has the name of the Swift module '\(name)' that imported package '\(package)' is generated into: generated code names that package's types '\(name).<Type>', which would find this type instead; rename it", at: location)
        }
        for message in messages where message.parent == nil && message.importedFrom == nil {
            report("message '\(message.name)'", message.swiftName, at: message.location)
        }
        for definition in enums where definition.parent == nil && definition.importedFrom == nil {
            report("enum '\(definition.name)'", definition.swiftName, at: definition.location)
        }
        for key in keys {
            report("key '\(key.name)' (its type '\(key.swiftTypeName)')", key.swiftTypeName, at: key.location)
        }
        for (service, location) in serviceNames.sorted(by: { $0.value < $1.value }) {
            for generated in generatedTypeNames(forService: service) {
                report(generated == service ? "service '\(service)'" : "the type '\(generated)' that service '\(service)' generates", generated, at: location)
            }
        }
    }

    func generatedTypeNames(forService name: String) -> [String] {
        [name, "\(name)Service", "\(name)Client", "\(name)Handler", "Mock\(name)Service", "\(name)EventListener"]
    }

    /// `/v1/chats/{chatId}` and `/v1/chats/{id}` are the same route.
    func normalizedRoute(_ template: String) -> String {
        let path = template.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("{") ? "{}" : String($0) }.joined(separator: "/")
    }

    mutating func buildService(_ syntax: ServiceSyntax, file: Int) -> ServiceDefinition? {
        var auth: ServiceAuth?
        var status = ServiceStatus.enabled
        var encoding = BodyEncodingKind.protobuf
        var versions: ClosedRange<Int>?
        var countries: CountryRule?
        for setting in syntax.settings {
            let value = setting.values.first
            switch setting.keyword.text {
            case "auth":
                guard let value, let parsed = ServiceAuth(rawValue: value.text) else {
                    diagnostics.error(.invalidServiceSetting, "'auth' must be 'account' (authenticated connection) or 'none' (unauthenticated)", at: value?.location ?? setting.keyword.location)
                    continue
                }
                auth = parsed
            case "status":
                guard let value, let parsed = ServiceStatus(rawValue: value.text) else {
                    diagnostics.error(.invalidServiceSetting, "'status' must be 'enabled', 'experimental' or 'disabled'", at: value?.location ?? setting.keyword.location)
                    continue
                }
                status = parsed
            case "encoding":
                guard let value, let parsed = BodyEncodingKind(rawValue: value.text) else {
                    diagnostics.error(.invalidServiceSetting, "'encoding' must be 'protobuf' or 'json'", at: value?.location ?? setting.keyword.location)
                    continue
                }
                encoding = parsed
            case "version":
                let numbers = setting.values.compactMap { $0.integerValue.map { Int(clamping: $0) } }
                guard let low = numbers.first else { continue }
                let high = numbers.count > 1 ? numbers[1] : low
                guard low <= high else {
                    diagnostics.error(.invalidServiceSetting, "version range \(low) to \(high) is empty", at: setting.keyword.location)
                    continue
                }
                versions = low...high
            case "countries":
                countries = buildCountries(setting)
            default:
                break
            }
        }
        guard let auth else {
            if syntax.settings.contains(where: { $0.keyword.text == "auth" }) { return nil }
            diagnostics.error(.missingAuth, "service '\(syntax.name.text)' must declare who may call it: 'auth account' or 'auth none'", at: syntax.name.location)
            return nil
        }
        var endpoints: [EndpointDefinition] = []
        var memberNames: [String: SourceLocation] = [:]
        // Names each service namespace already declares for itself.
        for (name, what) in [("descriptor", "the service's descriptor"), ("routes", "routes(_:)"), ("dispatch", "dispatch(_:to:)")] {
            if let member = (syntax.endpoints.map(\.name) + syntax.events.map(\.name)).first(where: { $0.text == name }) {
                diagnostics.error(.generatedMemberCollision, "'\(name)' would collide with \(what), which every service declares; choose another name", at: member.location)
            }
        }
        let endpointsByName = Dictionary(syntax.endpoints.map { ($0.name.text, $0) }, uniquingKeysWith: { first, _ in first })
        for event in syntax.events {
            if let endpoint = endpointsByName[event.name.text + "Event"] {
                diagnostics.error(.generatedMemberCollision, "rpc '\(endpoint.name.text)' would collide with the descriptor of event '\(event.name.text)' ('\(event.name.text)Event'); choose another name", at: endpoint.name.location)
            }
        }
        for endpointSyntax in syntax.endpoints {
            if let previous = memberNames[endpointSyntax.name.text] {
                diagnostics.error(.duplicateServiceMember, "'\(endpointSyntax.name.text)' is already declared in service '\(syntax.name.text)' at \(describe(previous))", at: endpointSyntax.name.location)
                continue
            }
            memberNames[endpointSyntax.name.text] = endpointSyntax.name.location
            if var endpoint = buildEndpoint(endpointSyntax, service: syntax.name.text, serviceEncoding: encoding) {
                if let setting = endpointSyntax.settings.first(where: { $0.keyword.text == "version" }) {
                    endpoint.versions = endpointVersions(setting, service: syntax.name.text, serviceVersions: versions)
                }
                endpoints.append(endpoint)
            }
        }
        // A paged rpc adds `<name>Pages` and `<name>Items` to the service protocol, and
        // `<name>Pagination` to the service's namespace beside the rpcs' descriptors.
        let endpointsBySwiftName = Dictionary(endpoints.map { ($0.swiftName, $0) }, uniquingKeysWith: { first, _ in first })
        for endpoint in endpoints where endpoint.pagination != nil {
            for suffix in ["Pages", "Items", "Pagination"] {
                if let other = endpointsBySwiftName[endpoint.swiftName + suffix] {
                    diagnostics.error(.generatedMemberCollision, "rpc '\(other.name)' would collide with '\(endpoint.swiftName + suffix)', which paged rpc '\(endpoint.name)' generates; choose another name", at: other.location)
                }
            }
        }
        var events: [EventDefinition] = []
        for eventSyntax in syntax.events {
            if let previous = memberNames[eventSyntax.name.text] {
                diagnostics.error(.duplicateServiceMember, "'\(eventSyntax.name.text)' is already declared in service '\(syntax.name.text)' at \(describe(previous))", at: eventSyntax.name.location)
                continue
            }
            memberNames[eventSyntax.name.text] = eventSyntax.name.location
            if let event = buildEvent(eventSyntax) { events.append(event) }
        }
        return ServiceDefinition(
            name: syntax.name.text, fullName: qualified([syntax.name.text]), auth: auth, versions: versions, status: status,
            encoding: encoding, endpoints: endpoints, events: events, isDeprecated: Self.hasAttribute("deprecated", syntax.attributes),
            documentation: syntax.documentation, file: file, location: syntax.name.location, countries: countries)
    }

    /// `countries [USA, GBR]` or `countries [!CHN]`: ISO 3166-1 alpha-3 codes, all allowed or all denied.
    mutating func buildCountries(_ setting: SettingSyntax) -> CountryRule? {
        var allowed: [String] = [], denied: [String] = []
        var seen: Set<String> = []
        for value in setting.values {
            let negated = value.text.hasPrefix("!")
            let code = negated ? String(value.text.dropFirst()) : value.text
            guard code.count == 3, code.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) }) else {
                diagnostics.error(.invalidServiceSetting, "'\(code)' is not an ISO 3166-1 alpha-3 country code (three capital letters, such as CHN)", at: value.location)
                continue
            }
            guard seen.insert(code).inserted else {
                diagnostics.error(.invalidServiceSetting, "country '\(code)' is listed twice", at: value.location)
                continue
            }
            if negated { denied.append(code) } else { allowed.append(code) }
        }
        if !allowed.isEmpty && !denied.isEmpty {
            diagnostics.error(.invalidServiceSetting, "'countries' lists either where the service is offered ([USA, GBR]) or where it is not ([!CHN]), not both", at: setting.keyword.location)
            return nil
        }
        if allowed.isEmpty && denied.isEmpty {
            if !setting.values.isEmpty { return nil }
            diagnostics.error(.invalidServiceSetting, "'countries' needs at least one country: [USA] or [!CHN]", at: setting.keyword.location)
            return nil
        }
        return allowed.isEmpty ? .deny(denied) : .allow(allowed)
    }

    /// An rpc's `version` range, which must lie within its service's.
    mutating func endpointVersions(_ setting: SettingSyntax, service: String, serviceVersions: ClosedRange<Int>?) -> ClosedRange<Int>? {
        let numbers = setting.values.compactMap { $0.integerValue.map { Int(clamping: $0) } }
        guard let low = numbers.first else { return nil }
        guard let serviceVersions else {
            diagnostics.error(.invalidServiceSetting, "an rpc's 'version' narrows its service's; give service '\(service)' a 'version' first", at: setting.keyword.location)
            return nil
        }
        // `version 2` alone: from 2 to the service's newest.
        let high = numbers.count > 1 ? numbers[1] : serviceVersions.upperBound
        guard low <= high else {
            diagnostics.error(.invalidServiceSetting, "version range \(low) to \(high) is empty", at: setting.keyword.location)
            return nil
        }
        guard serviceVersions.contains(low), serviceVersions.contains(high) else {
            diagnostics.error(.invalidServiceSetting, "version \(low) to \(high) is not within the versions of service '\(service)' (\(serviceVersions.lowerBound) to \(serviceVersions.upperBound))", at: setting.keyword.location)
            return nil
        }
        return low...high
    }

    mutating func resolveMessage(_ names: [NameSyntax], role: String) -> Int? {
        let location = names[0].location
        guard let type = resolveValue(.named(components: names, argument: nil, location: location), scope: []) else { return nil }
        guard case let .message(index) = type else {
            diagnostics.error(.unknownType, "the \(role) must be a message, not '\(names.map(\.text).joined(separator: "."))'", at: location)
            return nil
        }
        return index
    }

    mutating func swiftMemberName(_ name: NameSyntax, kind: String) -> String {
        checkMemberName(name, kind: kind)
        if SwiftNames.escapableKeywords.contains(name.text) || SwiftNames.renamedKeywords.contains(name.text) {
            diagnostics.error(.invalidIdentifier, "\(kind) name '\(name.text)' is a Swift keyword; choose another name", at: name.location)
        }
        return name.text
    }

    // MARK: Endpoints

    mutating func buildEndpoint(_ syntax: EndpointSyntax, service: String, serviceEncoding: BodyEncodingKind) -> EndpointDefinition? {
        let swiftName = swiftMemberName(syntax.name, kind: "rpc")
        checkAttributes(syntax.attributes, allowed: Self.deprecationOnly, on: "an rpc")
        let request = syntax.request.flatMap { resolveMessage($0, role: "request") }
        let response = syntax.response.flatMap { resolveMessage($0, role: "response") }
        guard let route = syntax.route else {
            diagnostics.error(.missingRoute, "rpc '\(syntax.name.text)' has no route; add a line such as 'GET \"/v1/path\"'", at: syntax.name.location)
            return nil
        }
        var endpoint = EndpointDefinition(
            name: syntax.name.text, swiftName: swiftName,
            rpcName: "\(qualified([service]))/\(SwiftNames.uppercaseFirst(syntax.name.text))",
            verb: route.verb.text, pathTemplate: route.path.text, runtimePathTemplate: route.path.text,
            pathParameters: [], queryParameters: [], headers: [], body: .none, request: request, response: response,
            errors: [], keys: [], timeoutMilliseconds: nil, isIdempotent: false,
            isDeprecated: Self.hasAttribute("deprecated", syntax.attributes), encoding: serviceEncoding,
            documentation: syntax.documentation, location: syntax.name.location)
        let errorsBeforeRoute = diagnostics.diagnostics.count
        // The rpc's error cases so far, and its keys by parameter name (key → first listed).
        var errorLookup = ErrorCaseLookup()
        var keyParameters: [String: String] = [:]
        var requestMemberNames: Set<String>?
        bindRoute(&endpoint, path: route.path, syntax: syntax)
        let routeIsValid = diagnostics.diagnostics.count == errorsBeforeRoute

        var explicitBody: Token?
        for setting in syntax.settings {
            switch setting.keyword.text {
            case "paginate":
                if endpoint.pagination != nil {
                    diagnostics.error(.invalidPagination, "rpc '\(syntax.name.text)' has a second 'paginate' block", at: setting.keyword.location)
                } else {
                    endpoint.pagination = buildPagination(setting, of: endpoint)
                }
            case "idempotent":
                endpoint.isIdempotent = true
            case "timeout":
                guard let amount = setting.values.first?.integerValue, amount > 0, amount < 86_400_000 else {
                    diagnostics.error(.invalidTimeout, "a timeout must be a positive number of seconds ('10s') or milliseconds ('500ms')", at: setting.keyword.location)
                    continue
                }
                let unit = setting.values.count > 1 ? setting.values[1].text : "s"
                endpoint.timeoutMilliseconds = unit == "ms" ? Int(amount) : Int(amount) * 1000
            case "encoding":
                guard let value = setting.values.first, let parsed = BodyEncodingKind(rawValue: value.text) else {
                    diagnostics.error(.invalidServiceSetting, "'encoding' must be 'protobuf' or 'json'", at: setting.keyword.location)
                    continue
                }
                endpoint.encoding = parsed
            case "rpcName":
                guard let value = setting.values.first, Self.isRPCName(value.text) else {
                    diagnostics.error(.invalidServiceSetting, "an rpcName has the form 'package.Service/Method' (identifiers: letters, digits, '_')", at: setting.keyword.location)
                    continue
                }
                endpoint.rpcName = value.text
            case "keys":
                for value in setting.values {
                    guard let index = keyIndexByName[value.text] else {
                        var message = "unknown key '\(value.text)'"
                        if takeSuggestion(), let suggestion = Parser.suggest(value.text, among: keys.map(\.name)) { message += "; did you mean '\(suggestion)'?" }
                        diagnostics.error(.unknownKey, message, at: value.location)
                        continue
                    }
                    let parameter = SwiftNames.jsonName(keys[index].name)
                    // Each key is a parameter of the generated call, which cannot take one twice.
                    if let first = keyParameters[parameter] {
                        let text = first == keys[index].name
                            ? "key '\(value.text)' is already listed for rpc '\(endpoint.name)'"
                            : "keys '\(first)' and '\(value.text)' are both the parameter '\(parameter)' of rpc '\(endpoint.name)'; list one of them"
                        diagnostics.error(.invalidKey, text, at: value.location)
                        continue
                    }
                    keyParameters[parameter] = keys[index].name
                    endpoint.keys.append(index)
                    if let request, messages.indices.contains(request) {
                        let memberNames = requestMemberNames ?? Set(messages[request].fields.map(\.swiftName) + messages[request].oneofs.map(\.swiftName))
                        requestMemberNames = memberNames
                        if memberNames.contains(parameter) {
                            diagnostics.error(.invalidIdentifier, "key '\(value.text)' has the name of a field or oneof of the request \(messages[request].name): the generated call would take both as '\(parameter)'", at: value.location)
                        }
                    }
                }
            case "header":
                guard setting.values.count == 2 else { continue }
                let header = setting.values[0], field = setting.values[1]
                if !isHeaderName(header.text) {
                    diagnostics.error(.invalidPathTemplate, "'\(header.text)' is not a valid header name", at: header.location)
                } else {
                    warnIfNotGRPCMetadata(header)
                }
                if let binding = bind(field.text, at: field.location, in: endpoint, as: header.text, encoding: nil, allowLists: false) {
                    endpoint.headers.append(binding)
                }
            case "body":
                explicitBody = setting.values.first
            case "errors":
                for value in setting.values {
                    guard let set = errorSetSyntax[value.text] else {
                        var message = "unknown error set '\(value.text)'"
                        if takeSuggestion(), let suggestion = Parser.suggest(value.text, among: errorSetSyntax.keys.sorted()) { message += "; did you mean '\(suggestion)'?" }
                        diagnostics.error(.unknownErrorSet, message, at: value.location)
                        continue
                    }
                    // Listed again, a set would only repeat each of its cases.
                    guard errorLookup.listedSets.insert(value.text).inserted else {
                        diagnostics.error(.duplicateErrorStatus, "error set '\(value.text)' is already listed for rpc '\(endpoint.name)'", at: value.location)
                        continue
                    }
                    for item in set.cases { addErrorCase(item, to: &endpoint, lookup: &errorLookup) }
                }
            default:
                break
            }
        }
        for item in syntax.errors { addErrorCase(item, to: &endpoint, lookup: &errorLookup) }
        endpoint.errors.sort { $0.status < $1.status }
        // A broken route already explains why fields are not bound; do not pile on.
        if routeIsValid { bindBody(&endpoint, explicit: explicitBody) }
        return endpoint
    }

    /// An rpc's error cases so far (positions in its `errors`) by status, name and gRPC code,
    /// and the error sets it listed: each case is checked against them, not against every
    /// earlier case.
    struct ErrorCaseLookup {
        var byStatus: [Int: Int] = [:]
        var byName: [String: Int] = [:]
        var byGRPCCode: [Int: Int] = [:]
        var listedSets: Set<String> = []
    }

    /// An error set's cases without those that repeat an earlier case's status or name: the
    /// repeats are reported here, once, not again by every rpc that lists the set.
    mutating func uniqueErrorCases(of errorSet: ErrorSetSyntax) -> [ErrorCaseSyntax] {
        var byStatus: [Int: ErrorCaseSyntax] = [:]
        var statusByName: [String: Int] = [:]
        var unique: [ErrorCaseSyntax] = []
        for item in errorSet.cases {
            // A status out of range is reported by each rpc that lists the set, as for its own cases.
            let status = item.status.value.map { Int(clamping: $0) }
            if let status, (300...599).contains(status) {
                if let previous = byStatus[status] {
                    // Past the cap the message is dropped: do not work out where the first one is.
                    let place = diagnostics.isFull ? "" : " at \(describe(previous.status.location))"
                    diagnostics.error(.duplicateErrorStatus, "status \(status) is already declared in error set '\(errorSet.name.text)' as '\(previous.name.text)'\(place)", at: item.status.location)
                    continue
                }
                if let previous = statusByName[item.name.text] {
                    diagnostics.error(.duplicateErrorStatus, "error case '\(item.name.text)' is already declared in error set '\(errorSet.name.text)' (status \(previous))", at: item.name.location)
                    continue
                }
                byStatus[status] = item
                statusByName[item.name.text] = status
            }
            unique.append(item)
        }
        return unique
    }

    mutating func addErrorCase(_ item: ErrorCaseSyntax, to endpoint: inout EndpointDefinition, lookup: inout ErrorCaseLookup) {
        guard let rawStatus = item.status.value else { return }
        let status = Int(clamping: rawStatus)
        guard (300...599).contains(status) else {
            diagnostics.error(.invalidErrorStatus, "error status \(status) is not a 3xx, 4xx or 5xx status", at: item.status.location)
            return
        }
        if let previous = lookup.byStatus[status].map({ endpoint.errors[$0] }) {
            let place = diagnostics.isFull ? "" : " at \(describe(previous.location))"
            diagnostics.error(.duplicateErrorStatus, "status \(status) is already declared for rpc '\(endpoint.name)' as '\(previous.name)'\(place)", at: item.status.location)
            return
        }
        if let previous = lookup.byName[item.name.text].map({ endpoint.errors[$0] }) {
            diagnostics.error(.duplicateErrorStatus, "error case '\(item.name.text)' is already declared for rpc '\(endpoint.name)' (status \(previous.status))", at: item.name.location)
            return
        }
        checkMemberName(item.name, kind: "error case")
        if SwiftNames.isKeyword(item.name.text) {
            diagnostics.error(.invalidIdentifier, "error case name '\(item.name.text)' is a Swift keyword; choose another (such as '\(item.name.text)Error')", at: item.name.location)
        }
        if item.name.text == "unrecognized" {
            diagnostics.error(.invalidErrorBinding, "'unrecognized' is reserved for statuses the schema does not declare", at: item.name.location)
        }
        var body: Int?
        var retryAfter = false
        for binding in item.bindings {
            if binding.text == "retryAfter" {
                retryAfter = true
                continue
            }
            guard body == nil else {
                diagnostics.error(.invalidErrorBinding, "an error case decodes at most one body message", at: binding.location)
                continue
            }
            let components = binding.text.split(separator: ".").map { NameSyntax(text: String($0), location: binding.location) }
            body = resolveMessage(components, role: "error body")
        }
        var grpcCode: Int?
        if let name = item.grpcCode {
            if let code = GRPCStatusCodes.code(named: name.text), code != 0 {
                if let previous = lookup.byGRPCCode[code].map({ endpoint.errors[$0] }) {
                    diagnostics.error(.invalidGRPCCode, "gRPC code \(name.text) already stands for error '\(previous.name)' of rpc '\(endpoint.name)'", at: name.location)
                } else {
                    grpcCode = code
                }
            } else if name.text == "OK" {
                diagnostics.error(.invalidGRPCCode, "OK is success, not an error: give the error another gRPC code", at: name.location)
            } else {
                let hint = Suggestion.closest(to: name.text, among: Array(GRPCStatusCodes.names.dropFirst())).map { " (did you mean \($0)?)" } ?? ""
                diagnostics.error(.invalidGRPCCode, "unknown gRPC status code '\(name.text)'\(hint)", at: name.location)
            }
        }
        let position = endpoint.errors.count
        lookup.byStatus[status] = position
        lookup.byName[item.name.text] = position
        if let grpcCode { lookup.byGRPCCode[grpcCode] = position }
        endpoint.errors.append(ErrorCaseDefinition(
            status: status, name: item.name.text, swiftName: item.name.text, body: body, retryAfter: retryAfter,
            grpcCode: grpcCode, documentation: item.documentation, location: item.status.location))
    }

    /// What a path template may hold: RFC 3986's unreserved and sub-delimiter characters,
    /// ':', '@', '/' and '?', and the template's braces. Anything else needs percent-encoding
    /// on the wire, and quotes, backslashes and controls would also break the string literal
    /// the path becomes in generated code.
    static func isPathCharacter(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return false }
        if ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) { return true }
        return "-._~!$&'()*+,;=:@/?{}".unicodeScalars.contains(scalar)
    }

    static let pathCharacters = "use letters, digits and -._~!$&'()*+,;=:@/?{}"

    /// `package.Service/Method`: dotted identifiers, one slash, an identifier.
    static func isRPCName(_ text: String) -> Bool {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return false }
        func isIdentifier(_ part: Substring) -> Bool {
            guard let first = part.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_" else { return false }
            return part.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
        }
        return halves[0].split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isIdentifier) && isIdentifier(halves[1])
    }

    /// A character named so it can be found: printable ASCII as itself, others by code point.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        scalar.value > 0x20 && scalar.value < 0x7F ? "'\(Character(scalar))'" : "U+\(String(scalar.value, radix: 16, uppercase: true))"
    }

    /// Parses the route's path and query, binding each placeholder to a request field.
    mutating func bindRoute(_ endpoint: inout EndpointDefinition, path token: Token, syntax: EndpointSyntax) {
        let template = token.text
        let location = token.location
        guard Parser.verbs.contains(endpoint.verb) else {
            diagnostics.error(.invalidVerb, "unknown verb '\(endpoint.verb)'", at: syntax.route!.verb.location)
            return
        }
        guard template.hasPrefix("/") else {
            diagnostics.error(.invalidPathTemplate, "path template \"\(template)\" must start with '/'", at: location)
            return
        }
        if let bad = template.unicodeScalars.first(where: { !Self.isPathCharacter($0) }) {
            diagnostics.error(.invalidPathTemplate, "path template has \(Self.describe(bad)), which a path cannot hold as written; \(Self.pathCharacters)", at: location)
            return
        }
        let parts = template.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var runtimeSegments: [String] = []
        var pathFields: Set<Int> = []
        for segment in parts[0].split(separator: "/", omittingEmptySubsequences: false).dropFirst() {
            if segment.contains("{") || segment.contains("}") {
                guard segment.hasPrefix("{"), segment.hasSuffix("}"), segment.count > 2 else {
                    diagnostics.error(.invalidPathTemplate, "a placeholder must fill a whole path segment: '\(segment)'", at: location)
                    return
                }
                let (name, encoding) = splitPlaceholder(segment.dropFirst().dropLast())
                runtimeSegments.append("{\(name)}")
                if let binding = bind(name, at: location, in: endpoint, as: name, encoding: encoding, allowLists: false) {
                    if !pathFields.insert(binding.field).inserted {
                        diagnostics.error(.invalidPathTemplate, "field '\(name)' appears twice in the path", at: location)
                    }
                    endpoint.pathParameters.append(binding)
                }
            } else {
                if segment.contains(where: { $0 == " " || $0 == "%" || $0 == "#" }) {
                    diagnostics.error(.invalidPathTemplate, "path segment '\(segment)' has characters that need escaping", at: location)
                }
                runtimeSegments.append(String(segment))
            }
        }
        var runtime = "/" + runtimeSegments.joined(separator: "/")
        if parts.count > 1 {
            var queryParts: [String] = []
            for pair in parts[1].split(separator: "&") {
                let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let queryName = String(halves[0])
                if queryName.contains("{") || queryName.contains("}") {
                    diagnostics.error(.invalidPathTemplate, "query parameter '\(pair)' must look like 'name={field}' or 'name='", at: location)
                    continue
                }
                var placeholder = halves.count > 1 ? halves[1] : ""
                if placeholder.isEmpty { placeholder = "{\(SwiftNames.jsonName(queryName))}"[...] }
                guard placeholder.hasPrefix("{"), placeholder.hasSuffix("}"), !queryName.isEmpty else {
                    diagnostics.error(.invalidPathTemplate, "query parameter '\(pair)' must look like 'name={field}' or 'name='", at: location)
                    continue
                }
                let (field, encoding) = splitPlaceholder(placeholder.dropFirst().dropLast())
                if let binding = bind(field, at: location, in: endpoint, as: queryName, encoding: encoding, allowLists: true) {
                    endpoint.queryParameters.append(binding)
                }
                queryParts.append("\(queryName)={\(field)}")
            }
            runtime += "?" + queryParts.joined(separator: "&")
        }
        endpoint.runtimePathTemplate = runtime
    }

    func splitPlaceholder(_ text: Substring) -> (String, String?) {
        let pieces = text.split(separator: ":", maxSplits: 1)
        return (String(pieces.first ?? ""), pieces.count > 1 ? String(pieces[1]) : nil)
    }

    /// Binds a placeholder or header to a request field, checking its type and encoding.
    mutating func bind(
        _ fieldName: String, at location: SourceLocation, in endpoint: EndpointDefinition, as name: String,
        encoding written: String?, allowLists: Bool
    ) -> ParameterBinding? {
        guard let request = endpoint.request else {
            diagnostics.error(.unknownPathParameter, "'\(fieldName)' is bound, but rpc '\(endpoint.name)' has no request message", at: location)
            return nil
        }
        let message = messages[request]
        guard let index = fieldIndex(named: fieldName, in: request) else {
            var text = "'\(fieldName)' is not a field of \(message.name)"
            if takeSuggestion(), let suggestion = Parser.suggest(fieldName, among: message.fields.map(\.name)) { text += "; did you mean '\(suggestion)'?" }
            diagnostics.error(.unknownPathParameter, text, at: location)
            return nil
        }
        let field = message.fields[index]
        var valueType: ValueType
        switch field.shape {
        case let .singular(type), let .optional(type):
            valueType = type
        case let .list(type) where allowLists:
            valueType = type
        default:
            diagnostics.error(.invalidParameterType, "field '\(fieldName)' is a \(allowLists ? "map" : "list or map") and cannot be bound to '\(name)'", at: location)
            return nil
        }
        if field.oneof != nil {
            diagnostics.error(.invalidParameterType, "oneof field '\(fieldName)' cannot be bound to '\(name)'", at: location)
            return nil
        }
        let isBytes = valueType == .scalar(.bytes)
        switch valueType {
        case .scalar, .enumeration, .timestamp(.millis):
            break
        default:
            diagnostics.error(.invalidParameterType, "field '\(fieldName)' is a message or timestamp and cannot be bound to '\(name)'; bind a scalar field", at: location)
            return nil
        }
        var encoding: ParameterEncoding = isBytes ? .base64url : .percent
        if let written {
            guard let parsed = ParameterEncoding(rawValue: written) else {
                diagnostics.error(.invalidParameterType, "unknown encoding '\(written)'; use 'percent' or 'base64url'", at: location)
                return nil
            }
            if parsed == .base64url, !isBytes {
                diagnostics.error(.invalidParameterType, "'base64url' applies to bytes fields; '\(fieldName)' is not bytes", at: location)
                return nil
            }
            if parsed == .percent, isBytes {
                diagnostics.error(.invalidParameterType, "bytes field '\(fieldName)' must be 'base64url' in a path or query", at: location)
                return nil
            }
            encoding = parsed
        }
        return ParameterBinding(name: name, field: index, encoding: encoding)
    }

    /// The first field of message `message` named `name` or with the JSON name `name`.
    /// The table is made once per message: a route of thousands of placeholders scanned
    /// every field for each.
    mutating func fieldIndex(named name: String, in message: Int) -> Int? {
        if let table = fieldIndexByName[message] { return table[name] }
        var table: [String: Int] = [:]
        for (index, field) in messages[message].fields.enumerated() {
            if table[field.name] == nil { table[field.name] = index }
            if table[field.jsonName] == nil { table[field.jsonName] = index }
        }
        fieldIndexByName[message] = table
        return table[name]
    }

    mutating func bindBody(_ endpoint: inout EndpointDefinition, explicit: Token?) {
        let bodyless = ["GET", "HEAD", "DELETE"].contains(endpoint.verb)
        let bound = Set(endpoint.pathParameters.map(\.field) + endpoint.queryParameters.map(\.field) + endpoint.headers.map(\.field))
        if let explicit {
            if bodyless {
                diagnostics.error(.bodyNotAllowed, "a \(endpoint.verb) request has no body; bind its fields to the path, query or headers", at: explicit.location)
                return
            }
            guard let request = endpoint.request else {
                diagnostics.error(.invalidBody, "rpc '\(endpoint.name)' has no request message to send as its body", at: explicit.location)
                return
            }
            if explicit.kind == .star {
                endpoint.body = .request
            } else {
                guard let index = messages[request].fields.firstIndex(where: { $0.name == explicit.text }) else {
                    diagnostics.error(.invalidBody, "'\(explicit.text)' is not a field of \(messages[request].name)", at: explicit.location)
                    return
                }
                let field = messages[request].fields[index]
                switch field.shape {
                case .singular(.message), .optional(.message): endpoint.body = .field(index)
                default:
                    diagnostics.error(.invalidBody, "the body field '\(explicit.text)' must be a message", at: explicit.location)
                    return
                }
            }
        } else if !bodyless, let request = endpoint.request, messages[request].fields.contains(where: { _ in true }) {
            endpoint.body = .request
        }
        // Every request field must travel somewhere.
        guard let request = endpoint.request else { return }
        if case .request = endpoint.body { return }
        for (index, field) in messages[request].fields.enumerated() where !bound.contains(index) {
            if case let .field(bodyField) = endpoint.body, bodyField == index { continue }
            diagnostics.error(.unboundRequestField, "field '\(field.name)' of \(messages[request].name) is not sent by \(endpoint.verb) \(endpoint.pathTemplate); bind it to the path, query or a header\(bodyless ? "" : ", or send it in the body")", at: endpoint.location)
        }
    }

    // MARK: Events

    mutating func buildEvent(_ syntax: EventSyntax) -> EventDefinition? {
        let swiftName = swiftMemberName(syntax.name, kind: "event")
        let payload = syntax.payload.flatMap { resolveMessage($0, role: "event payload") }
        guard let route = syntax.route else {
            diagnostics.error(.missingRoute, "event '\(syntax.name.text)' has no route; add a line such as 'PUT \"/api/v1/message\"'", at: syntax.name.location)
            return nil
        }
        guard Parser.verbs.contains(route.verb.text) else {
            diagnostics.error(.invalidVerb, "unknown verb '\(route.verb.text)'", at: route.verb.location)
            return nil
        }
        guard route.path.text.hasPrefix("/"), !route.path.text.contains("{"), !route.path.text.contains("?") else {
            diagnostics.error(.invalidEvent, "an event path is a fixed path starting with '/', without placeholders or query", at: route.path.location)
            return nil
        }
        if let bad = route.path.text.unicodeScalars.first(where: { !Self.isPathCharacter($0) }) {
            diagnostics.error(.invalidEvent, "event path has \(Self.describe(bad)), which a path cannot hold as written; \(Self.pathCharacters)", at: route.path.location)
            return nil
        }
        var acknowledgement = EventDefinition.Acknowledgement.afterHandling
        for setting in syntax.settings where setting.keyword.text == "ack" {
            guard let value = setting.values.first, let parsed = EventDefinition.Acknowledgement(rawValue: value.text) else {
                diagnostics.error(.invalidEvent, "'ack' must be 'afterHandling' or 'onReceipt'", at: setting.keyword.location)
                continue
            }
            acknowledgement = parsed
        }
        return EventDefinition(
            name: syntax.name.text, swiftName: swiftName, verb: route.verb.text, path: route.path.text, payload: payload,
            acknowledgement: acknowledgement, documentation: syntax.documentation, location: syntax.name.location)
    }
}
