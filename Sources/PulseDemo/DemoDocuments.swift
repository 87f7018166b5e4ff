import Foundation
import PulseArchive
import PulseDocuments
import PulseStore

/// The demo store's workout documents: three starter splits, a workout every two or three days
/// with set entries and metrics, a deleted split (its full stub) and a deleted starter seed (a
/// minimal stub with kind `seed`).
struct DemoDocuments {
    let options: DemoOptions
    let firstDay: Int64
    let lastDay: Int64

    private static let splits: [(name: String, color: String, symbol: String, exercises: [(String, Int, Int, Double, LoadType)])] = [
        ("Push Day", "red", "figure.strengthtraining.traditional",
         [("Bench Press", 4, 8, 60, .weight), ("Overhead Press", 3, 10, 32.5, .weight), ("Dips", 3, 12, 0, .none), ("Plank", 3, 0, 0, .duration)]),
        ("Pull Day", "blue", "figure.rower",
         [("Deadlift", 3, 5, 100, .weight), ("Lat Pulldown", 4, 10, 45, .weight), ("Pull-ups", 3, 8, 0, .none)]),
        ("Legs", "green", "figure.run",
         [("Back Squat", 4, 6, 80, .weight), ("Leg Press", 3, 12, 120, .weight), ("Walking Lunges", 3, 20, 10, .weight), ("Wall Sit", 2, 0, 0, .duration)]),
    ]

    func write(storeDirectory: String, random: inout SeededGenerator) throws {
        var ulids = ULIDGenerator()
        let created = firstDay - 86_400_000
        var splitIDs: [String] = []
        for (order, split) in Self.splits.enumerated() {
            let id = ulids.next(at: created + Int64(order) * 1000, using: &random).description
            splitIDs.append(id)
            let exercises: [JSONNode] = split.exercises.enumerated().map { index, exercise in
                var fields: [ByteKey: JSONNode] = [
                    "id": .string(ulids.next(at: created + Int64(order) * 1000, using: &random).description),
                    "name": .string(exercise.0), "order": int(index), "sets": int(exercise.1), "reps": int(exercise.2),
                    "weight": number(exercise.3), "loadType": int(exercise.4.rawValue),
                    "durationSeconds": int(exercise.4 == .duration ? 60 : 0),
                ]
                if exercise.0 == "Leg Press" || exercise.0 == "Lat Pulldown" {
                    fields["machineSettings"] = .array([.object(["name": .string("Seat Height"), "value": .string("4")]),
                                                        .object(["name": .string("Back Rest Incline"), "value": .string("45°")])])
                }
                return .object(fields)
            }
            let document: JSONNode = .object([
                "schemaVersion": int(DocumentSchema.currentSplitVersion), "id": .string(id), "name": .string(split.name),
                "color": .string(split.color), "systemImage": .string(split.symbol), "order": int(order),
                "createdAt": date(created), "updatedAt": date(created + 3_600_000), "exercises": .array(exercises),
                "activityType": int(WorkoutActivityType.traditionalStrength.rawValue), "restSeconds": int(90),
            ])
            try PulseStore.writeDocument(document, at: DocumentPath("Splits/\(id).json"), storeDirectory: storeDirectory)
        }

        // A split the user deleted: its record with deletedAt added, live file gone.
        let deletedID = ulids.next(at: created + 10_000, using: &random).description
        let deletedSplit: JSONNode = .object([
            "schemaVersion": int(DocumentSchema.currentSplitVersion), "id": .string(deletedID), "name": .string("Old Full Body"),
            "color": .string("orange"), "systemImage": .string("dumbbell"), "order": int(3), "createdAt": date(created),
            "updatedAt": date(created), "exercises": .array([]), "deletedAt": date(firstDay + 5 * 86_400_000),
        ])
        try PulseStore.writeDocument(deletedSplit, at: DocumentPath("Stubs/Splits/\(deletedID).json"), storeDirectory: storeDirectory)
        // A starter seed the user removed: a minimal stub that vetoes its resurrection forever.
        let seedID = ulids.next(at: created + 20_000, using: &random).description
        try PulseStore.writeDocument(.object(["id": .string(seedID), "deletedAt": date(created + 60_000), "kind": .string("seed")]),
                                     at: DocumentPath("Stubs/Splits/\(seedID).json"), storeDirectory: storeDirectory)

        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = options.timeZone
        var day = firstDay
        var index = 0
        while day <= lastDay {
            let splitIndex = index % Self.splits.count
            let start = day + (17 * 60 + Int64(random.integer(0...90))) * 60_000
            try writeWorkout(split: splitIndex, splitID: splitIDs[splitIndex], start: start, calendar: calendar,
                             storeDirectory: storeDirectory, ulids: &ulids, random: &random)
            day += Int64(random.integer(2...3)) * 86_400_000
            index += 1
        }
    }

    private func writeWorkout(split: Int, splitID: String, start: Int64, calendar: Calendar, storeDirectory: String,
                              ulids: inout ULIDGenerator, random: inout SeededGenerator) throws {
        let id = ulids.next(at: start, using: &random).description
        var cursor = start
        var logs: [JSONNode] = []
        var volume = 0.0
        for (order, exercise) in Self.splits[split].exercises.enumerated() {
            let logStart = cursor
            var entries: [JSONNode] = []
            for _ in 0..<exercise.1 {
                cursor += Int64(random.integer(90...180)) * 1000
                switch exercise.4 {
                case .weight:
                    let reps = exercise.2 - random.integer(0...2)
                    let weight = exercise.3 + Double(random.integer(0...2)) * 2.5
                    volume += Double(reps) * weight
                    entries.append(.object(["reps": int(reps), "weight": number(weight), "completedAt": date(cursor)]))
                case .none:
                    entries.append(.object(["reps": int(exercise.2 - random.integer(0...3)), "completedAt": date(cursor)]))
                case .duration:
                    entries.append(.object(["seconds": int(random.integer(45...75)), "completedAt": date(cursor)]))
                }
            }
            logs.append(.object([
                "id": .string(ulids.next(at: start, using: &random).description), "exerciseName": .string(exercise.0),
                "order": int(order), "sets": int(exercise.1), "reps": int(exercise.2), "weight": number(exercise.3),
                "loadType": int(exercise.4.rawValue), "durationSeconds": int(exercise.4 == .duration ? 60 : 0),
                "currentStateIndex": int(exercise.1 * 2), "status": .string(WorkoutStatus.completed.rawValue),
                "date": date(start), "startedAt": date(logStart), "completedAt": date(cursor), "setEntries": .array(entries),
                "updatedAt": date(cursor),
            ]))
        }
        let end = cursor + 60_000
        var fields: [ByteKey: JSONNode] = [
            "schemaVersion": int(DocumentSchema.currentWorkoutVersion), "id": .string(id), "splitID": .string(splitID),
            "splitName": .string(Self.splits[split].name), "start": date(start), "end": date(end),
            "status": .string(WorkoutStatus.completed.rawValue), "createdAt": date(start), "updatedAt": date(end),
            "logs": .array(logs), "restSeconds": int(90),
            "metrics": .object([
                "activeEnergyKcal": number(Double(random.integer(180...420))), "avgHeartRate": number(Double(random.integer(105...135))),
                "maxHeartRate": number(Double(random.integer(150...175))), "minHeartRate": number(Double(random.integer(70...90))),
                "totalVolume": number(volume), "hrZoneSeconds": .array((0..<5).map { _ in number(Double(random.integer(60...900))) }),
                "source": .string(MetricSource.watch.rawValue), "recordedAt": date(end),
            ]),
        ]
        if random.chance(0.2) {
            // The user removed an exercise from this workout on the phone.
            fields["deletedLogIDs"] = .object([ByteKey(ulids.next(at: start, using: &random).description): date(start + 600_000)])
        }
        let month = calendar.dateComponents([.year, .month], from: Date(timeIntervalSince1970: Double(start) / 1000))
        let path = String(format: "Workouts/%04d/%02d/%@.json", month.year!, month.month!, id)
        try PulseStore.writeDocument(.object(fields), at: DocumentPath(path), storeDirectory: storeDirectory)
    }

    private func int(_ value: Int) -> JSONNode { .number(String(value)) }
    private func number(_ value: Double) -> JSONNode { .number(JSONText.number(value)) }
    private func date(_ millis: Int64) -> JSONNode { .string(DocumentCoder.dateString(millis)) }
}
